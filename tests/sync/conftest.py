"""The GitHub API test server most sync tests run against: every request and answer checked against GitHub's
API description, and no ref update ever forced."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from helpers.ghserver import GitHubServer
from helpers.sync import SpecCheck, make_bare


@pytest.fixture
def server(tmp_path: Path) -> Iterator[GitHubServer]:
    check = SpecCheck()
    with GitHubServer(make_bare(tmp_path / "remote.git"), check=check) as srv:
        yield srv
    assert check.errors == []
    assert all(r.body.get("force") is False for r in srv.requests_sent("PATCH"))
