"""Property-based tests of the whole API from its own OpenAPI document (schemathesis): authenticated
requests generated from every operation's schema against a real server on a real workspace; no
answer is a 5xx, every status is documented, every body matches its schema. The example count per
operation is kept small so that the suite stays quick; `KBSYNC_API_EXAMPLES` raises it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from web.conftest import bare_remote

from helpers.board import payload as entry_payload
from helpers.web import WebServer, configure

EXAMPLES = int(os.environ.get("KBSYNC_API_EXAMPLES", "6"))
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory, home: Path) -> Iterator[WebServer]:
    """A server on a workspace with something to find: sessions, a board entry, a fact, a conflict, a remote to
    sync with."""
    from kbsync.app.workspace import init_workspace

    tmp = tmp_path_factory.mktemp("fuzz")
    root = tmp / "ws"
    init_workspace(root)
    configure(root)
    bare_remote(tmp, root)
    srv = WebServer(root, home)
    for n in range(3):
        srv.call("POST", "/sessions", body={"session_id": f"seed-{n}", "tags": ["合同"], "summary": "付款条款"})
    srv.call("POST", "/board/entries", body=entry_payload())
    srv.call("PUT", "/memory/language", body={"value": "中文"})
    srv.call("POST", "/sessions", body={"session_id": "seed-conflict", "status": "conflict"})  # one conflict to list
    yield srv
    srv.kill()


def _labels() -> list[str]:
    """Every operation of the document, from the application itself (the served one is the same)."""
    from kbsync.app.workspace import Workspace
    from kbsync.web.asgi import build

    doc = build(lambda: Workspace(Path(".")), base_url="http://127.0.0.1").openapi()
    return [f"{method.upper()} {path}" for path, ops in doc["paths"].items() for method in ops]


@pytest.fixture(scope="module")
def api_schema(fuzzed: WebServer) -> Any:
    return schemathesis.openapi.from_url(f"{fuzzed.url}/api/openapi.json",
                                         headers={"Authorization": f"Bearer {fuzzed.token}"})


@pytest.mark.parametrize("label", _labels())
def test_every_operation_answers_as_its_document_says(label: str, api_schema: Any, fuzzed: WebServer) -> None:
    operation = api_schema.find_operation_by_label(label)
    assert operation is not None, f"{label} is not in the served document"
    auth = {"Authorization": f"Bearer {fuzzed.token}"}

    @given(case=operation.as_strategy())
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    def answers(case: Any) -> None:
        case.call_and_validate(headers=auth, checks=CHECKS, timeout=30)

    answers()
