"""kbsync.service.jobs: every registered job names a function that exists, and intervals come from the config."""

from __future__ import annotations

import inspect

import pytest

from kbsync.config import Config, DaemonConfig
from kbsync.service import jobs


@pytest.mark.parametrize("target", [j.target for j in jobs.POST_WRITE] + [j.target for j in jobs.TIMED]
                         + [j.when for j in jobs.TIMED if j.when])
def test_every_target_resolves_to_a_function(target: str) -> None:
    fn = jobs.resolve(target)
    assert callable(fn) and len(inspect.signature(fn).parameters) >= 1


def test_interval_reads_the_dotted_config_key() -> None:
    commit = next(j for j in jobs.TIMED if j.name == "commit")
    assert commit.interval(Config()) == 3600
    assert commit.interval(Config(daemon=DaemonConfig(commit_every="30m"))) == 1800


def test_job_names_are_unique() -> None:
    names = [j.name for j in jobs.POST_WRITE] + [j.name for j in jobs.TIMED]
    assert len(names) == len(set(names))
