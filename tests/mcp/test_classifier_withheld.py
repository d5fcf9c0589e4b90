"""A passage is flagged by the rules or by the learned classifier: text only the classifier reads as an
instruction (no rule's phrasing matches) is withheld wherever memory reaches a model, as the rules' flags are:
MCP read, get_context and search (the SDK's own client over stdio), and the HTTP API's memory block, context
pack and search (a real server). With the semantic leg off the rules alone run, its store unopened; reading
never makes one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from helpers.mcp import data, stdio
from helpers.retrieval import ONLY_BY_MEANING, build_semantic, plant_classified
from helpers.web import WebServer, configure
from kbsync import config
from kbsync.app import reading, recall, retrieval
from kbsync.app.workspace import init_workspace
from kbsync.core.detect.injection import detect
from kbsync.retrieval import semanticstore
from kbsync.store.workspace import Workspace

MARKER = "[withheld by kbsync: embedded instruction (classifier)]"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    root = tmp_path_factory.mktemp("classified") / "ws"
    init_workspace(root)
    sid, planted = plant_classified(root)
    build_semantic(root)
    return root, sid, planted


def test_read_get_context_and_search_withhold_what_only_the_classifier_flags(built: tuple[Path, str, str]) -> None:
    root, sid, planted = built
    assert not detect(ONLY_BY_MEANING)
    before = (root / planted).read_text(encoding="utf-8")

    async def run() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with stdio(root) as client:
            item = data(await client.call_tool("read", {"ref": sid}))
            ctx = data(await client.call_tool("get_context", {"query": "invoice"}))
            found = data(await client.call_tool("search", {"query": "invoice inbox"}))
            return item, ctx, found

    item, ctx, found = anyio.run(run)
    assert (root / planted).read_text(encoding="utf-8") == before  # the file is never changed

    body = item["content"]
    assert ONLY_BY_MEANING not in body["text"] and MARKER in body["text"]
    assert "## 用户输入" in body["text"] and "status: closed" in body["text"]  # nothing around it is lost
    assert {f["family"] for f in body["flags"]} == {"classifier"}
    spans = [before[f["span"][0]:f["span"][1]] for f in body["flags"]]
    assert ONLY_BY_MEANING in spans and "Mail triage" in spans  # the head it flagged: its summary and body
    assert all(set(f) == {"field", "family", "span", "line", "why"} for f in body["flags"])

    assert all(ONLY_BY_MEANING not in p["content"]["text"] for p in ctx["parts"])
    flags = [f for p in ctx["parts"] for f in p["content"]["flags"]]
    assert flags and {f["family"] for f in flags} == {"classifier"}
    assert any("untrusted data" in p["content"]["text"] for p in ctx["parts"])

    hit = next(h for h in found["results"] if h["path"] == planted)
    assert ONLY_BY_MEANING not in json.dumps(hit, ensure_ascii=False)
    assert "classifier" in {f["family"] for f in hit["flags"]} | {f["family"] for f in hit["content"]["flags"]}
    assert ONLY_BY_MEANING in [before[f["span"][0]:f["span"][1]] for f in hit["flags"]]  # the file's offsets
    other = next(h for h in found["results"] if h["path"] != planted and h["path"].startswith("sessions/"))
    assert other["flags"] == [] and other["content"]["flags"] == []


def test_the_memory_block_context_and_search_of_the_http_api_withhold_it(built: tuple[Path, str, str],
                                                                         tmp_path: Path) -> None:
    root, _sid, planted = built
    configure(root)
    server = WebServer(root, tmp_path)
    try:
        block = server.call("POST", "/memory-block", body={"query": "invoice inbox billing"}).json()
        pack = server.call("POST", "/context", body={"query": "invoice"}).json()
        hits = server.call("GET", "/search", params={"q": "invoice"}).json()["results"]
    finally:
        server.stop()
    assert planted in block["keys"] and ONLY_BY_MEANING not in block["text"] and MARKER in block["text"]
    assert block["withheld"] >= 1
    assert ONLY_BY_MEANING not in pack["text"] and "classifier" in {f["family"] for f in pack["flags"]}
    hit = next(h for h in hits if h["path"] == planted)
    assert ONLY_BY_MEANING not in json.dumps(hit, ensure_ascii=False)
    assert "classifier" in {f["family"] for f in hit["flags"]}


def test_with_the_semantic_leg_off_the_rules_alone_run_and_its_store_is_not_opened(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    init_workspace(root)
    sid, _planted = plant_classified(root)
    (root / ".kbsync" / "config.toml").write_text("[search]\nsemantic = false\n", encoding="utf-8")
    store = semanticstore.db_path(root / ".kbsync")
    store.write_bytes(b"not a database")  # opened, it would fail the read
    ws = Workspace(*config.resolve(str(root), None))
    item = reading.read(ws, sid)
    assert ONLY_BY_MEANING in item.text and item.verdicts is not None and not item.verdicts.lines
    assert ONLY_BY_MEANING in retrieval.build_context(ws, "invoice", []).text()
    assert ONLY_BY_MEANING in recall.memory_block(ws, "invoice inbox billing").text


def test_reading_never_makes_the_semantic_store(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    init_workspace(root)
    sid, _planted = plant_classified(root)
    ws = Workspace(*config.resolve(str(root), None))
    assert ws.config.search.semantic
    assert ONLY_BY_MEANING in reading.read(ws, sid).text
    assert ONLY_BY_MEANING in retrieval.build_context(ws, "invoice", []).text()
    assert not semanticstore.db_path(ws.state_dir).exists()
