"""The OpenAPI document's field descriptions for the shapes of kbsync.results: the docstring under each field
there. The shapes carry no pydantic metadata (the MCP server derives its tools' output schemas from the same
classes, and a model's context pays for every description), so the document is given them once it is made."""

from __future__ import annotations

import ast
import functools
import inspect
from typing import Any

from fastapi import FastAPI


class DescribedApi(FastAPI):
    """FastAPI whose OpenAPI document describes each field of a kbsync.results shape by its docstring."""

    def openapi(self) -> dict[str, Any]:
        first = self.openapi_schema is None
        doc = super().openapi()
        if first:
            describe(doc)
        return doc


def describe(doc: dict[str, Any]) -> None:
    """Give each property of a component named after a shape the shape's docstring for it, unless it has one."""
    docs = field_docs()
    for name, schema in doc.get("components", {}).get("schemas", {}).items():
        for field, text in docs.get(name, {}).items():
            prop = schema.get("properties", {}).get(field)
            if isinstance(prop, dict):
                prop.setdefault("description", text)


@functools.cache
def field_docs() -> dict[str, dict[str, str]]:
    """Each shape's fields' docstrings (those of the shapes it extends included), by class and field name."""
    from kbsync import results

    classes = {n.name: n for n in ast.parse(inspect.getsource(results)).body if isinstance(n, ast.ClassDef)}

    def of(name: str) -> dict[str, str]:
        node = classes[name]
        out: dict[str, str] = {}
        for base in node.bases:
            out |= of(base.id) if isinstance(base, ast.Name) and base.id in classes else {}
        return out | {a.target.id: " ".join(b.value.value.split()) for a, b in zip(node.body, node.body[1:])
               if isinstance(a, ast.AnnAssign) and isinstance(a.target, ast.Name) and isinstance(b, ast.Expr)
               and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str)}

    return {name: of(name) for name in classes}
