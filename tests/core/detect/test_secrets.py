"""The secret scanner (kbsync.secrets): rules, opt-outs, masking, and no false positives on the corpus."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers.corpus import gen_workspace
from helpers.hook import ALNUM, provider_secrets, rand
from kbsync.core.detect import secrets
from kbsync.core.detect.secrets import SecretFinding, default_rules, parse_allowlist, scan_bytes, scan_text
from kbsync.errors import ConfigError

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("rule", sorted(provider_secrets()))
def test_each_provider_is_found_once_with_a_masked_preview(rule: str) -> None:
    line = provider_secrets()[rule]
    found = scan_text("notes.md", f"intro\n\n{line}\nend\n")
    assert [(f.path, f.line, f.rule) for f in found] == [("notes.md", 3, rule)]
    shown = str(found[0]) + repr(found[0])
    assert found[0].preview.endswith(secrets.MASK) and len(found[0].preview) <= 4 + len(secrets.MASK)
    assert all(chunk not in shown for chunk in line.split() if len(chunk) > 12)


def test_rules_cover_the_providers_the_protocol_names() -> None:
    ids = {r.id for r in default_rules().rules}
    for needed in ("github-pat", "gitlab-pat", "aws-access-token", "gcp-api-key", "slack-bot-token",
                   "stripe-access-token", "openai-api-key", "anthropic-api-key", "tencent-cloud-secret-id",
                   "alibaba-access-key-id", "private-key", "jwt", "generic-api-key"):
        assert needed in ids


def test_every_packaged_regex_compiles() -> None:
    rs = default_rules()
    patterns = [*rs.allow_secret, *(p for r in rs.rules for p in (r.regex, *r.allow_secret, *r.allow_match,
                                                                   *r.allow_line))]
    assert len(patterns) > len(rs.rules)
    for pattern in patterns:
        secrets._re(pattern)


def test_a_bad_regex_is_a_config_error_naming_the_rules_file() -> None:
    bad = secrets.parse_rules('[[rules]]\nid = "broken"\nregex = "(unclosed"\nkeywords = ["tok"]\n')
    with pytest.raises(ConfigError, match="bad regex '\\(unclosed'.*fix the rules file"):
        scan_text("a.md", "tok here\n", rules=bad)


def test_packaged_rules_keep_their_attribution() -> None:
    head = secrets.RULES_FILE.read_text(encoding="utf-8")[:2000]
    assert "gitleaks" in head and "MIT" in head and "detect-secrets" in head


def test_inline_markers_allow_a_line() -> None:
    line = provider_secrets()["github-pat"]
    assert scan_text("a.md", f"{line} <!-- kbsync:allow -->\n") == []
    assert scan_text("a.md", f"{line}  # gitleaks:allow\n") == []
    assert len(scan_text("a.md", f"kbsync:allow\n{line}\n")) == 1  # the marker covers its own line only


def test_allowlist_fingerprints_drop_accepted_findings() -> None:
    text = provider_secrets()["slack-bot-token"] + "\n" + provider_secrets()["gitlab-pat"] + "\n"
    found = scan_text("a.md", text)
    allowed = parse_allowlist(f"# reviewed\n\n{found[0].fingerprint}   # sandbox token\n")
    assert [f.rule for f in scan_text("a.md", text, allowed)] == [found[1].rule]


def test_fingerprint_is_stable_across_moves_and_edits() -> None:
    line = provider_secrets()["stripe-access-token"]
    a = scan_text("a.md", line)[0]
    b = scan_text("sub/b.md", f"new first line\n\n{line}\n")[0]
    assert a.fingerprint == b.fingerprint and a.line != b.line


@pytest.mark.parametrize("text", [
    "api_key = ${API_KEY}",
    "password: changeme",
    "token: {{ secrets.GITHUB_TOKEN }}",
    "tokens_in: 18240",
    "secret_key = abcdefghijklmnopqrstuvwxyz",
    "see https://example.org/docs/auth?x=1 for the key rotation guide",
    "postgres://user:${DB_PASSWORD}@db.internal:5432/app",
    "the monkey_key_word is plain text",
])
def test_placeholders_and_prose_are_not_findings(text: str) -> None:
    assert scan_text("a.md", text + "\n") == []


def test_low_entropy_and_stopword_values_are_dropped() -> None:
    assert scan_text("a.md", "auth_token = aaaaaaaaaaaaaaaaaaaa\n") == []
    assert scan_text("a.md", f"api_key = {'example' + rand(ALNUM, 20, 3)}\n") == []


def test_line_numbers_with_crlf_and_multiline_keys() -> None:
    pem = provider_secrets()["private-key"]
    text = "a\r\nb\r\n" + pem.replace("\n", "\r\n") + "\r\n"
    found = scan_text("k.md", text)
    assert [(f.rule, f.line) for f in found] == [("private-key", 3)]


def test_url_credentials_and_own_files_are_exempt_by_name() -> None:
    pw = rand(ALNUM, 16, 21)
    assert [f.rule for f in scan_text("a.md", f"redis://app:{pw}@cache.local:6379/0\n")] == ["url-embedded-credentials"]
    assert scan_text("x/secret-rules.toml", f"redis://app:{pw}@cache.local\n") == []
    assert scan_text(".kbsync-allow", provider_secrets()["github-pat"]) == []


def test_binary_bytes_are_skipped_and_bad_utf8_still_scanned() -> None:
    line = provider_secrets()["github-pat"].encode()
    assert scan_bytes("x.bin", b"\x00\x01" + line) == []
    assert [f.rule for f in scan_bytes("x.txt", b"\xff\xfe" + line)] == ["github-pat"]


def test_findings_are_values() -> None:
    f = SecretFinding("a.md", 3, "jwt", "eyJh********", "jwt@0123456789abcdef")
    assert str(f) == "a.md:3: secret (jwt) eyJh******** [jwt@0123456789abcdef]"
    assert secrets.mask("abc") == secrets.MASK and secrets.shannon_entropy("aabb") == 1.0


def test_many_keyword_lines_are_scanned_in_one_pass() -> None:
    filler = "the key to the api is auth token access; 钥匙 key\n" * 20000
    text = filler + provider_secrets()["generic-api-key"] + "\n" + filler
    assert [(f.rule, f.line) for f in scan_text("big.md", text)] == [("generic-api-key", 20001)]


def test_repository_holds_no_secret_shaped_literal() -> None:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    paths = [p for p in listed.stdout.decode().split("\0") if p and (ROOT / p).is_file()]
    found = [str(f) for p in paths for f in scan_bytes(p, (ROOT / p).read_bytes())]
    assert found == []


def test_no_false_positives_on_the_benchmark_corpus(tmp_path: Path) -> None:
    ws = gen_workspace(tmp_path / "ws", sessions=3000)
    files = [p for p in ws.rglob("*") if p.is_file()]
    assert len(files) > 3000
    found = [str(f) for p in files for f in scan_bytes(p.name, p.read_bytes())]
    assert found == []


def test_reports_quoted_in_a_file_are_not_findings_themselves() -> None:
    """A session may quote the hook's output: previews and fingerprints must not look like secrets."""
    report = "\n".join(f"{f}; add `{f.fingerprint}` to .kbsync-allow"
                       for line in provider_secrets().values() for f in scan_text("a.md", line))
    assert report.count("\n") == len(provider_secrets()) - 1
    assert scan_text("sessions/quoted.md", report) == []
