"""The pool behind validate and repair: input order kept, small work in process, failures name the batch."""

from __future__ import annotations

import os
import time
from typing import Iterable, Iterator

import pytest

from kbsync import parallel
from kbsync.parallel import PoolError


def square_with_pid(batch: list[int]) -> list[tuple[int, int]]:
    return [(n * n, os.getpid()) for n in batch]


def dies_on_777(batch: list[int]) -> list[int]:
    if 777 in batch:
        os._exit(9)
    return batch


def hangs_on_0(batch: list[int]) -> list[int]:
    if 0 in batch:
        time.sleep(60)
    return batch


def raises_on_777(batch: list[int]) -> list[int]:
    if 777 in batch:
        raise ValueError("bad item")
    return batch


def joined(fn: object, items: Iterable[int], **kw: object) -> list[object]:
    return [r for _batch, found in parallel.batches(fn, items, **kw) for r in found]  # type: ignore[arg-type]


def test_results_come_in_input_order_from_several_processes() -> None:
    items = list(range(3000))
    got = joined(square_with_pid, items, size=50, jobs=2)
    assert [sq for sq, _pid in got] == [n * n for n in items]  # type: ignore[misc]
    pids = {pid for _sq, pid in got}  # type: ignore[misc]
    assert os.getpid() not in pids and len(pids) == 2


def test_a_small_set_stays_in_this_process() -> None:
    got = joined(square_with_pid, list(range(parallel.MIN_PARALLEL - 1)), jobs=2)
    assert {pid for _sq, pid in got} == {os.getpid()}  # type: ignore[misc]


def test_one_worker_means_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(parallel.WORKERS_ENV, "1")
    got = joined(square_with_pid, list(range(2000)))
    assert {pid for _sq, pid in got} == {os.getpid()}  # type: ignore[misc]


@pytest.mark.parametrize("fn,says", [(dies_on_777, "the worker process died"),
                                     (raises_on_777, "the worker failed: ValueError: bad item")])
def test_a_worker_that_dies_or_fails_is_an_error_naming_its_batch(fn: object, says: str) -> None:
    with pytest.raises(PoolError) as caught:
        joined(fn, list(range(2000)), size=100, jobs=2)
    assert "files 700 to 799 (batch 8 of 20)" in str(caught.value) and says in str(caught.value)
    assert caught.value.exit_code == 3


def test_a_batch_past_its_time_bound_is_an_error_and_no_worker_stays() -> None:
    start = time.monotonic()
    with pytest.raises(PoolError) as caught:
        joined(hangs_on_0, list(range(2000)), size=100, jobs=2, timeout_s=2.0)
    assert "files 0 to 99 (batch 1 of 20)" in str(caught.value) and "longer than 2 s" in str(caught.value)
    assert time.monotonic() - start < 30
    import multiprocessing

    assert multiprocessing.active_children() == []


def test_an_iterator_is_read_as_the_work_goes_and_never_far_ahead() -> None:
    pulled = 0

    def walk() -> Iterator[int]:
        nonlocal pulled
        for n in range(5000):
            pulled += 1
            yield n

    ahead, got = 0, []
    for batch, found in parallel.batches(square_with_pid, walk(), size=50, jobs=2):
        got += [sq for sq, _pid in found]
        ahead = max(ahead, pulled - len(got))
    assert got == [n * n for n in range(5000)]
    assert ahead <= parallel.MIN_PARALLEL + (parallel.WINDOW * 2 + 1) * 50  # not the 5,000 of a list made first


def test_a_failure_over_an_iterator_names_its_batch_without_a_total() -> None:
    with pytest.raises(PoolError) as caught:
        joined(raises_on_777, iter(range(2000)), size=100, jobs=2)
    assert "files 700 to 799 (batch 8)" in str(caught.value)


def test_a_short_iterator_stays_in_this_process() -> None:
    got = joined(square_with_pid, iter(range(parallel.MIN_PARALLEL - 1)), jobs=2)
    assert {pid for _sq, pid in got} == {os.getpid()}  # type: ignore[misc]
