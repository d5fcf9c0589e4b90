"""The OpenAPI document's descriptions for the shapes of kbsync.results: the docstring under each field there,
and the comment on each class's line. The shapes carry no pydantic metadata (the MCP server derives its tools' output schemas from the same
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
    """Give each property of a component named after a shape the shape's docstring for it, and the component
    the comment on the shape's `class` line, unless they have a description."""
    docs, notes = field_docs(), class_notes()
    for name, schema in doc.get("components", {}).get("schemas", {}).items():
        if name in notes:
            schema.setdefault("description", notes[name])
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


@functools.cache
def class_notes() -> dict[str, str]:
    """The comment on each shape's `class` line (`class Pack(TypedDict):  # a context pack`), by class name."""
    from kbsync import results

    lines = inspect.getsource(results).splitlines()
    notes = {}
    for node in ast.parse("\n".join(lines)).body:
        head = lines[node.lineno - 1] if isinstance(node, ast.ClassDef) else ""
        if isinstance(node, ast.ClassDef) and "):  # " in head:
            text = head.split("):  # ", 1)[1].strip()
            notes[node.name] = text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")
    return notes
