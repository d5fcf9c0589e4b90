"""`kbsync session save` and kbsync.store: paths, updates in place, input errors, two writers on one file."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from helpers.cli import Cli
from helpers.core import new_workspace, one_line_error, save, snapshot
from kbsync.core import indexmd, protocol
from kbsync.core.session import parse_session
from kbsync.errors import ConflictError, InputError
from kbsync.store import fsio, sessions
from kbsync.store.repairfile import validate_paths
from kbsync.store.workspace import Workspace

TS = "2025-06-11T14:32:07+08:00"
RAW_ID = "7f3c2a9e-1b2c-4d5e-8f90-a1b2c3d4e5f6"


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    return new_workspace(tmp_path / "ws")


def _h7(raw: str) -> str:
    return hashlib.sha1(raw.encode("utf-8")).hexdigest()[:7]


def _rows(ws: Workspace) -> list[indexmd.Row]:
    return indexmd.parse_rows(ws.path("index.md").read_text(encoding="utf-8"))


def _errors_log(ws: Workspace) -> list[str]:
    return ws.path(protocol.ERRORS_LOG).read_text(encoding="utf-8").splitlines()


# ---- save semantics ------------------------------------------------------------------

def test_new_file_path_comes_from_ts_as_written_and_sha1_of_the_raw_id(ws: Workspace, cli: Cli) -> None:
    proc = save(ws.root, {"session_id": RAW_ID, "title": "合同 风险/梳理", "ts": "2025-06-11T23:59:30-05:00"})
    assert proc.returncode == 0, proc.stderr
    rel = proc.stdout.strip()
    assert rel == f"sessions/2025-06-11/2359-{_h7(RAW_ID)}-合同-风险梳理.md"
    doc = parse_session(ws.read_text(rel))
    assert doc.fields["id"] == f"20250611-2359-{_h7(RAW_ID)}"
    assert doc.fields["ts"] == "2025-06-11T23:59:30-05:00"  # never converted
    assert [t for t, _ in doc.sections] == list(protocol.SECTIONS)
    assert [r.path for r in _rows(ws)] == [rel]
    assert cli("validate", rel, ws=ws.root, cwd=ws.root).returncode == 0


def test_second_save_updates_in_place_and_appends_an_index_row(ws: Workspace) -> None:
    first = save(ws.root, {"session_id": RAW_ID, "title": "合同", "ts": TS, "tags": ["合同", "风险"], "turns": 3,
                           "summary": "first", "sections": {"用户输入": "问题", "结论": "初稿", "附录": "keep me"}})
    rel = first.stdout.strip()
    path = ws.path(rel)
    second = save(ws.root, {"session_id": RAW_ID, "title": "another title", "ts": "2030-01-01T00:00:00Z",
                            "summary": "second", "status": "closed", "sections": {"结论": "定稿", "待办": "- 跟进"}},
                  "--json")
    assert second.returncode == 0, second.stderr
    record = json.loads(second.stdout)
    assert record["path"] == rel
    assert record["summary"] == "second" and record["status"] == "closed"
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    doc = parse_session(path.read_text(encoding="utf-8"))
    assert doc.fields["ts"] == TS and doc.fields["id"].endswith(_h7(RAW_ID))  # identity kept
    assert doc.fields["tags"] == ["合同", "风险"] and doc.fields["turns"] == 3  # fields not given are kept
    assert doc.fields["summary"] == "second" and doc.fields["status"] == "closed"
    assert doc.section("结论") == "定稿" and doc.section("待办") == "- 跟进"  # given sections replaced
    assert doc.section("用户输入") == "问题" and doc.section("附录") == "keep me"  # the others kept
    rows = _rows(ws)
    assert [r.path for r in rows] == [rel, rel]
    assert indexmd.latest_by_path(rows)[rel].summary == "second"
    assert list(ws.backup_dir.glob(f"*/{rel}")), "the previous version is backed up"


def test_stray_headings_in_section_text_stay_text(ws: Workspace, cli: Cli) -> None:
    text = "第一行\n## 不是标题\n# 也不是\n### 三级可以\n```\n## 代码里\n```"
    rel = save(ws.root, {"session_id": RAW_ID, "ts": TS, "sections": {"结论": text}}).stdout.strip()
    raw = ws.path(rel).read_text(encoding="utf-8")
    doc = parse_session(raw)
    assert [t for t, _ in doc.sections] == list(protocol.SECTIONS)
    content = doc.section("结论")
    assert content is not None
    for piece in ("第一行", "不是标题", "也不是", "### 三级可以", "```\n## 代码里\n```"):
        assert piece in content
    assert "\n## 不是标题" not in raw and "\n# 也不是" not in raw
    assert cli("validate", ws=ws.root).returncode == 0


@pytest.mark.parametrize("payload, words", [
    ({"session_id": "a", "colour": "red"}, "unknown key"),
    ({"title": "no id"}, "session_id"),
    ({"session_id": "a", "role": "boss"}, "role"),
    ({"session_id": "a", "status": "done"}, "status"),
    ({"session_id": "a", "tags": "x,y"}, "tags"),
    ({"session_id": "a", "tags": ["ok", ""]}, "tags"),
    ({"session_id": "a", "turns": -1}, "turns"),
    ({"session_id": "a", "tokens_in": "12"}, "tokens_in"),
    ({"session_id": "a", "tokens_out": True}, "tokens_out"),
    ({"session_id": "a", "ts": "yesterday"}, "ts"),
    ({"session_id": "a", "parent": "not-an-id"}, "parent"),
    ({"session_id": "a", "sections": ["结论"]}, "sections"),
    ({"session_id": "a", "sections": {"## 结论": "x"}}, "section name"),
])
def test_input_errors_are_one_line_with_exit_2(ws: Workspace, payload: dict[str, object], words: str) -> None:
    before = snapshot(ws.root)
    proc = save(ws.root, payload)
    one_line_error(proc, "<stdin>")
    assert proc.returncode == 2
    assert words in proc.stderr
    assert snapshot(ws.root) == before


def test_payload_that_is_not_json_or_not_an_object(ws: Workspace, tmp_path: Path, cli: Cli) -> None:
    bad = tmp_path / "in.json"
    for content in (b"{not json", b"[1, 2]", b'{"session_id": "\xff"}'):
        bad.write_bytes(content)
        proc = cli("session", "save", "--file", str(bad), ws=ws.root)
        one_line_error(proc, str(bad))
        assert proc.returncode == 2
    assert not list(ws.path("sessions").rglob("*.md"))


# ---- two writers on one file ----------------------------------------------------------

def _saver(ws: Path, n: int, title: str = "并发") -> subprocess.Popen[bytes]:
    payload = {"session_id": RAW_ID, "title": title, "ts": TS, "summary": f"writer {n}",
               "sections": {"结论": f"from writer {n}\n" * 50}}
    proc = subprocess.Popen([sys.executable, "-m", "kbsync", "-w", str(ws), "session", "save"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(payload).encode("utf-8"))
    proc.stdin.close()
    return proc


def test_concurrent_saves_of_one_session_wait_for_the_lock(ws: Workspace) -> None:
    procs = [_saver(ws.root, n) for n in range(6)]
    results = [(p.wait(60), p.stdout.read().decode(), p.stderr.read().decode()) for p in procs]  # type: ignore[union-attr]
    ok = [r for r in results if r[0] == 0]
    for code, _out, err in results:
        assert code in (0, 1) and "Traceback" not in err
        if code == 1:
            assert "locked" in err and len(err.strip().splitlines()) == 1
    assert ok, results
    rel = f"sessions/2025-06-11/1432-{_h7(RAW_ID)}-并发.md"
    assert {out.strip() for _, out, _ in ok} == {rel}
    files = sorted(p.name for p in ws.path(rel).parent.iterdir())
    assert files == [ws.path(rel).name], "no second file, no conflict copy, no temp, no lock left"
    doc = parse_session(ws.read_text(rel))
    winner = doc.fields["summary"]
    assert doc.section("结论") == (f"from {winner}\n" * 50).strip("\n")  # one writer's whole text
    assert len(_rows(ws)) == len(ok)


def test_concurrent_first_saves_with_different_titles_make_one_file(ws: Workspace) -> None:
    procs = [_saver(ws.root, n, title=f"标题 {n}") for n in range(4)]
    results = [(p.wait(60), p.stdout.read().decode(), p.stderr.read().decode()) for p in procs]  # type: ignore[union-attr]
    assert [code for code, _, _ in results] == [0, 0, 0, 0], results
    paths = {out.strip() for _, out, _ in results}
    assert len(paths) == 1
    files = list(ws.path("sessions").rglob("*.md"))
    assert [f.relative_to(ws.root).as_posix() for f in files] == list(paths)
    assert save(ws.root, {"session_id": RAW_ID, "summary": "later"}).returncode == 0


def test_a_save_racing_a_repair_of_the_same_file_is_never_lost(ws: Workspace) -> None:
    rel = sessions.save_session(ws, {"session_id": RAW_ID, "ts": TS, "summary": "v0"}).relpath
    for n in range(1, 5):
        text = ws.path(rel).read_text(encoding="utf-8")
        fsio.atomic_write(ws.path(rel), text.replace("status: open", "status： open").encode("utf-8"))  # a person's typo
        repair = subprocess.Popen([sys.executable, "-m", "kbsync", "-w", str(ws.root), "repair"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        saver = save(ws.root, {"session_id": RAW_ID, "summary": f"v{n}"})
        repair.communicate(timeout=60)
        assert saver.returncode == 0, saver.stderr
        assert repair.returncode in (0, 1)
        doc = parse_session(ws.read_text(rel))
        assert doc.fields["summary"] == f"v{n}" and doc.fields["status"] == "open"
        assert not [f for f in validate_paths(ws, [rel]) if f.level == "error"]
    assert sorted(p.name for p in ws.path(rel).parent.iterdir()) == [ws.path(rel).name]


def test_a_save_over_a_typo_in_the_frontmatter_repairs_it_on_the_way(ws: Workspace) -> None:
    rel = sessions.save_session(ws, {"session_id": RAW_ID, "ts": TS, "summary": "v0", "tags": ["a"]}).relpath
    typo = ws.path(rel).read_text(encoding="utf-8").replace("status: open", "status： open")
    ws.path(rel).write_text(typo, encoding="utf-8")
    proc = save(ws.root, {"session_id": RAW_ID, "summary": "v1"})
    assert proc.returncode == 0, proc.stderr
    doc = parse_session(ws.read_text(rel))
    assert doc.fields["summary"] == "v1" and doc.fields["status"] == "open" and doc.fields["tags"] == ["a"]
    assert [p.read_text(encoding="utf-8") for p in ws.backup_dir.glob(f"*/{rel}")] == [typo]


def test_a_save_over_frontmatter_repair_cannot_read_is_refused(ws: Workspace) -> None:
    rel = sessions.save_session(ws, {"session_id": RAW_ID, "ts": TS}).relpath
    ws.path(rel).write_text("---\nid: [unclosed\n---\n\n## 结论\n", encoding="utf-8")
    before = snapshot(ws.root)
    proc = save(ws.root, {"session_id": RAW_ID, "summary": "v1"})
    one_line_error(proc, rel)
    assert proc.returncode == 1 and "by hand" in proc.stderr
    assert snapshot(ws.root) == before


def test_a_held_lock_gives_a_clear_locked_error_after_a_bounded_wait(ws: Workspace) -> None:
    first = save(ws.root, {"session_id": RAW_ID, "ts": TS, "summary": "kept"})
    path = ws.path(first.stdout.strip())
    fsio.lock_path(path).write_text(json.dumps(
        {"pid": os.getpid(), "host": socket.gethostname(), "expire": time.time() + 600}), encoding="utf-8")
    ws.path(".kbsync/config.toml").write_text("[daemon]\nlock_wait_s = 0.3\n", encoding="utf-8")
    before = snapshot(ws.root)
    start = time.monotonic()
    proc = save(ws.root, {"session_id": RAW_ID, "summary": "lost?"})
    assert time.monotonic() - start < 30
    one_line_error(proc, path.name)
    assert proc.returncode == 1 and "locked" in proc.stderr
    assert snapshot(ws.root) == before


def test_a_stale_lock_does_not_block_a_save(ws: Workspace) -> None:
    first = save(ws.root, {"session_id": RAW_ID, "ts": TS})
    path = ws.path(first.stdout.strip())
    fsio.lock_path(path).write_text(json.dumps(
        {"pid": os.getpid(), "host": socket.gethostname(), "expire": time.time() - 5}), encoding="utf-8")
    proc = save(ws.root, {"session_id": RAW_ID, "summary": "after a crash"})
    assert proc.returncode == 0, proc.stderr
    assert parse_session(path.read_text(encoding="utf-8")).fields["summary"] == "after a crash"
    assert not fsio.lock_path(path).exists()


def test_a_writer_with_a_stale_fingerprint_gets_a_conflict_copy(ws: Workspace) -> None:
    rel = sessions.save_session(ws, {"session_id": RAW_ID, "ts": TS, "summary": "v1"}).relpath
    path = ws.path(rel)
    _, stale = fsio.read_with_fingerprint(path)
    sessions.save_session(ws, {"session_id": RAW_ID, "summary": "v2 by someone else"})
    theirs = path.read_bytes()
    mine = path.read_text(encoding="utf-8").replace("v2 by someone else", "v2 by me")
    with pytest.raises(ConflictError) as err:
        sessions.write_session(ws, rel, mine, stale)
    assert path.read_bytes() == theirs, "never a silent overwrite"
    copy = err.value.copy
    assert copy is not None and copy in str(err.value)
    assert copy.startswith(rel[:-3] + ".conflict-") and protocol.is_conflict_copy(copy)
    assert protocol.CONFLICT_RE.search(copy)
    copied = parse_session(ws.read_text(copy))
    assert copied.fields["status"] == "conflict" and copied.fields["summary"] == "v2 by me"
    log = _errors_log(ws)
    assert len(log) == 1 and rel in log[0] and copy in log[0]
    assert log[0][:20].endswith("Z") and log[0][4] == "-"


def test_a_writer_expecting_a_new_file_that_now_exists_gets_a_conflict_copy(ws: Workspace) -> None:
    rel = sessions.save_session(ws, {"session_id": RAW_ID, "ts": TS, "summary": "first"}).relpath
    theirs = ws.path(rel).read_bytes()
    with pytest.raises(ConflictError) as err:
        sessions.write_session(ws, rel, theirs.decode().replace("first", "mine"), None)
    assert ws.path(rel).read_bytes() == theirs
    assert err.value.copy and ws.path(err.value.copy).exists()
    assert "conflict" in _errors_log(ws)[0]


def test_two_conflicts_in_the_same_second_get_distinct_copies(ws: Workspace) -> None:
    rel = sessions.save_session(ws, {"session_id": RAW_ID, "ts": TS}).relpath
    text = ws.path(rel).read_text(encoding="utf-8")
    copies = set()
    for _ in range(2):
        with pytest.raises(ConflictError) as err:
            sessions.write_session(ws, rel, text, fsio.Fingerprint(0, "0" * 64))
        copies.add(err.value.copy)
    assert len(copies) == 2 and all(c and ws.path(c).exists() for c in copies)


# ---- bad targets and payloads ---------------------------------------------------------

def test_a_session_file_that_is_a_symlink_out_of_the_workspace_is_refused(ws: Workspace, tmp_path: Path) -> None:
    rel = save(ws.root, {"session_id": RAW_ID, "ts": TS}).stdout.strip()
    outside = tmp_path / "outside.md"
    outside.write_bytes(ws.path(rel).read_bytes())
    ws.path(rel).unlink()
    ws.path(rel).symlink_to(outside)
    before = snapshot(ws.root), outside.read_bytes()
    proc = save(ws.root, {"session_id": RAW_ID, "summary": "x"})
    one_line_error(proc, rel)
    assert "symlink" in proc.stderr
    assert (snapshot(ws.root), outside.read_bytes()) == before
    assert ws.path(rel).is_symlink()


def test_a_session_folder_that_is_a_symlink_out_of_the_workspace_is_refused(ws: Workspace, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    ws.path("sessions/2025-06-11").symlink_to(outside, target_is_directory=True)
    proc = save(ws.root, {"session_id": RAW_ID, "ts": TS})
    one_line_error(proc, "sessions/2025-06-11")
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("data, words", [
    (b"---\nid: x\n\xff\xfe\n---\n", "UTF-8"),
    (b"---\nid: x\x00\n---\n", "binary"),
    (b"---\n" + b"a" * (5 * 1024 * 1024) + b"\n---\n", "limit"),
], ids=["not-utf8", "binary", "5MB"])
def test_an_existing_session_file_that_is_not_text_is_left_alone(ws: Workspace, data: bytes, words: str) -> None:
    rel = save(ws.root, {"session_id": RAW_ID, "ts": TS}).stdout.strip()
    ws.path(rel).write_bytes(data)
    before = snapshot(ws.root)
    proc = save(ws.root, {"session_id": RAW_ID, "summary": "x"})
    one_line_error(proc, rel)
    assert proc.returncode == 2 and words in proc.stderr
    assert snapshot(ws.root) == before


@pytest.mark.parametrize("text, named", [("a\u0000b", "in.json: sections.结论 holds a NUL character"),
                                         ("x" * (5 * 1024 * 1024), f"1432-{_h7(RAW_ID)}")], ids=["nul", "5MB"])
def test_a_payload_that_would_write_a_bad_file_is_refused(ws: Workspace, tmp_path: Path, text: str, named: str,
                                                          cli: Cli) -> None:
    payload = tmp_path / "in.json"
    payload.write_text(json.dumps({"session_id": RAW_ID, "ts": TS, "sections": {"结论": text}}), encoding="utf-8")
    before = snapshot(ws.root)
    proc = cli("session", "save", "--file", str(payload), ws=ws.root)
    one_line_error(proc, named)
    assert proc.returncode == 2
    assert snapshot(ws.root) == before


def test_a_long_running_process_finds_session_files_made_moved_and_removed_by_others_at_once(ws: Workspace) -> None:
    # One process keeps each date folder's listing between saves (kbsync.store.sessionnames); what another
    # writer does to a folder, even within the same second, is seen by the next lookup.
    first = sessions.save_session(ws, {"session_id": "kept-a", "ts": TS, "title": "一"}, "test")
    assert sessions.find_session(ws, _h7("kept-a")) == first.relpath
    folder = ws.path(first.relpath).parent
    other = folder / f"1500-{_h7('kept-b')}-二.md"
    other.write_bytes(ws.path(first.relpath).read_bytes())
    assert sessions.find_session(ws, _h7("kept-b")) == other.relative_to(ws.root).as_posix()
    again = folder / f"1600-{_h7('kept-a')}-一.md"
    again.write_bytes(b"x")
    with pytest.raises(InputError, match="several files carry the id hash"):
        sessions.find_session(ws, _h7("kept-a"))
    again.unlink()
    moved = ws.path("sessions/2024-01-02") / other.name
    moved.parent.mkdir()
    other.rename(moved)
    assert sessions.find_session(ws, _h7("kept-b")) == moved.relative_to(ws.root).as_posix()
    assert sessions.find_session(ws, _h7("kept-a")) == first.relpath
    (folder / f"1700-{_h7('kept-c')}-三.conflict-20250611T143207Z.md").write_bytes(b"x")
    assert sessions.find_session(ws, _h7("kept-c")) is None
    old = time.time() - 3600  # a folder listed long after its last change is listed again once it changes
    os.utime(moved.parent, (old, old))
    assert sessions.find_session(ws, _h7("kept-b")) == moved.relative_to(ws.root).as_posix()
    moved.unlink()
    assert sessions.find_session(ws, _h7("kept-b")) is None


def test_lookups_at_once_each_see_every_file_made_before_they_began(ws: Workspace) -> None:
    # Lookups waiting while another scans take that scan's listings only if it began after they came in
    # (kbsync.store.sessionnames): each thread makes a file in one of the folders, then looks it up at once.
    for day in range(1, 41):
        ws.path(f"sessions/2025-01-{day % 28 + 1:02d}").mkdir(parents=True, exist_ok=True)
    misses: list[str] = []

    def writer(k: int) -> None:
        for n in range(25):
            raw = f"at-once-{k}-{n}"
            rel = f"sessions/2025-01-{(k * 7 + n) % 28 + 1:02d}/1500-{_h7(raw)}-x.md"
            ws.path(rel).write_bytes(b"x")
            if sessions.find_session(ws, _h7(raw)) != rel:
                misses.append(rel)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert misses == []
