"""Hostile text at the door (kbsync.core.textguard) and git conflict markers in files (kbsync.core.validate)."""

from __future__ import annotations

import json

import pytest

from kbsync.config import Config
from kbsync.core import textguard
from kbsync.core.session import normalize_content
from kbsync.core.validate import conflict_markers, validate_text
from kbsync.errors import InputError


@pytest.mark.parametrize("char, what", [("\x00", "NUL character U+0000"), ("\x07", "control character U+0007"),
                                        ("\x1b", "control character U+001B"), ("\ud800", "lone surrogate"),
                                        ("\udcff", "lone surrogate")])
def test_controls_and_lone_surrogates_are_refused_naming_the_field(char: str, what: str) -> None:
    with pytest.raises(InputError) as err:
        textguard.clean(f"abc{char}def", "title", where="<stdin>")
    assert str(err.value).startswith("<stdin>: title holds ") and what in str(err.value)
    assert "at character 4" in str(err.value) and "\n" not in str(err.value)


def test_tab_newline_and_cr_are_text_and_cr_becomes_lf_in_multiline_text() -> None:
    assert textguard.clean("a\tb\nc", "x") == "a\tb\nc"
    assert textguard.clean("one\r## smuggled\r\ntwo", "x", multiline=True) == "one\n## smuggled\ntwo"
    assert textguard.clean("a\rb", "x") == "a\rb"  # a one-line field: its writer flattens line breaks


def test_json_nested_past_the_limit_is_one_line_naming_the_field() -> None:
    ok = {"sections": {"结论": "x"}, "tags": [[["a"]]]}
    textguard.check_tree(ok, "<stdin>")
    deep: object = "x"
    for _ in range(textguard.MAX_DEPTH + 1):
        deep = [deep]
    with pytest.raises(InputError, match=r"<stdin>: tags(\[0\])+ nests deeper than 64 levels"):
        textguard.check_tree({"tags": deep}, "<stdin>")


@pytest.mark.parametrize("raw, message", [
    (b"[" * 100_000 + b"]" * 100_000, "nests deeper than 64"),
    (b'{"a": ' * 100_000 + b"1" + b"}" * 100_000, "nests deeper than 64"),
    (b'{"title": "\\ud800"}', "title holds a lone surrogate"),
    (b'{"sections": {"x\\u0000": "y"}}', "the key of sections holds a NUL"),
    (b'{"n": ' + b"9" * 5000 + b"}", "not acceptable JSON"),
    (b'{"a": "\xff"}', "not UTF-8"),
    (b"[1, 2]", "expected a JSON object"),
])
def test_hostile_json_is_refused_in_one_line(raw: bytes, message: str) -> None:
    with pytest.raises(InputError) as err:
        textguard.loads_object(raw, "<stdin>")
    assert message in str(err.value) and "\n" not in str(err.value)


def test_acceptable_json_is_returned() -> None:
    assert textguard.loads_object(json.dumps({"title": "合同\t风险"}).encode(), "-") == {"title": "合同\t风险"}


# ---- conflict markers ------------------------------------------------------------------

CONFLICT = "intro\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> feature\nend\n"


def test_conflict_markers_are_errors_with_their_lines() -> None:
    found = conflict_markers("notes.md", CONFLICT)
    assert [(f.line, f.level) for f in found] == [(2, "error"), (4, "error"), (6, "error")]
    assert "resolve the conflict" in found[0].message
    assert [f.line for f in validate_text("memory/facts.md", CONFLICT.replace("\n", "\r\n"), Config())
            if "conflict marker" in f.message] == [2, 4, 6]


def test_markers_in_code_fences_and_lone_underlines_are_not_conflicts() -> None:
    assert conflict_markers("a.md", "Title\n=======\n\ntext\n") == []
    assert conflict_markers("a.md", "```\n<<<<<<< HEAD\n=======\n>>>>>>> b\n```\n") == []
    assert conflict_markers("a.md", "<<<<<<<<< not a marker\n>>>>>>>x\n") == []


def test_session_text_that_looks_like_a_conflict_is_escaped_losslessly() -> None:
    text = normalize_content("how git shows it:\n<<<<<<< HEAD\n=======\n>>>>>>> other\n")
    assert text == "how git shows it:\n\\<<<<<<< HEAD\n=======\n\\>>>>>>> other"
    assert conflict_markers("s.md", text) == [] and normalize_content(text) == text
