"""The always-on service behind `kbsync run`: observer, debounce, one worker thread, timed jobs, signals.

Threads: the main thread holds the workspace lock, handles signals and waits;
watchdog's thread only enqueues (kbsync.service.watch); the one worker thread does every
write: it validates and repairs files once they are quiet (kbsync.service.checker), runs the catch-up
scan and the commits, and keeps the status file (kbsync.store.daemonstatus); the registered jobs
(kbsync.service.jobs: sync, scan, the search index) run on the job thread, each
with a deadline (kbsync.service.jobrunner), so none can hold the worker. While
git is in the middle of an operation (kbsync.git.inprogress) the worker holds
the files it sees and commits nothing; it goes on by itself once git is done.
SIGTERM/SIGINT: finish the file in hand, stop the jobs and the programs they
run, commit what is committable, exit 0. SIGHUP: reload the configuration.

Servers (the local web server) are given by the command that starts the daemon, which composes
them: the daemon imports no front door. Each runs on a thread of its own from start to stop (see
`Server`); a server that fails is logged and the daemon goes on without it.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import signal
import socket
import threading
import time
from typing import Callable, Sequence

import schedule

from kbsync import allocator, openfiles, proc
from kbsync.app import status
from kbsync.errors import KbsyncError, LockedError
from kbsync.git import commit, inprogress, quiet, repo
from kbsync.service import jobrunner, jobs, watch
from kbsync.service.catchup import CatchUp
from kbsync.service.checker import LOCK_RECHECK_S, Checker
from kbsync.store import daemonstatus, fsio
from kbsync.store.daemonstatus import DaemonStatus
from kbsync.store.workspace import Workspace

log = logging.getLogger(__name__)

LOCK_TTL_S = 10 * 365 * 86400  # the daemon's lock lives as long as its pid
STOP_GRACE_S = 9.0
STATUS_EVERY_S = 0.5
MTIME_SLACK_NS = 2_000_000_000
COMMIT_RETRY_S = 5.0  # after git's index.lock, or a file still changing, kept something out of a commit
SERVER_STOP_S = 5.0  # how long the servers together may take to stop

# A server the daemon runs beside its worker: `serve(current, stop)` is called on a thread of its own with
# a function that gives the workspace as currently configured (it changes on SIGHUP) and the event set
# when the daemon stops; it serves until then and returns within SERVER_STOP_S.
Server = Callable[[Callable[[], Workspace], threading.Event], None]
HELD_RECHECK_S = 1.0  # how often the worker asks whether git's operation has ended
JOB_STOP_GRACE_S = 2.0  # at shutdown, what a running job gets before its programs are killed
# Files processed (by the worker, and by the post-write jobs after it) before the daemon, once nothing is left
# to do, gives the memory freed inside its heaps back to the system (allocator.release). The first catch-up
# over 12,000 files left up to 25 MB of freed blocks spread over the heaps (docs/benchmarks.md).
RELEASE_AFTER_FILES = 1000


def sd_notify(state: str) -> None:
    """Tell systemd (Type=notify) about readiness, reloads and stopping; a no-op outside systemd."""
    addr = os.environ.get("NOTIFY_SOCKET")
    if not addr:
        return
    target = "\0" + addr[1:] if addr.startswith("@") else addr
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.connect(target)
        sock.sendall(state.encode())


class Daemon:
    def __init__(self, load: Callable[[], Workspace], servers: Sequence[tuple[str, Server]] = ()) -> None:
        self._load = load
        self._servers = list(servers)
        self._servers_stop = threading.Event()
        self.ws = load()
        self.queue = watch.Debouncer(self.ws.config.daemon.quiet_ms / 1000)
        self.stopping = threading.Event()
        self._reload = threading.Event()
        self._scheduler = schedule.Scheduler()
        self.checker = Checker(self.ws, self.queue)  # each quiet file's check, on the worker thread
        self._commit_wanted: str | None = None
        self._commit_retry_at = 0.0
        self._scan_mark: int | None = None
        self._catchup = CatchUp(set(), set())
        self._status = DaemonStatus()  # what the status file holds beside the checker's findings and the queue
        self._left_out: dict[str, str] = {}  # what the last commit left out, and why
        self._dirty = True
        self._saved_at = 0.0
        self._worked = 0  # files processed since the heaps were last released
        self.failed = False
        # a job that ends wakes the worker: what waited for that job (the next paths to index) goes to it at once
        self._jobs = jobrunner.JobRunner(self.ws.config.daemon.job_deadline_s, on_end=self.queue.wake)
        self._post_pending: dict[str, set[str]] = {}
        self._waiting: str | None = None  # what git is in the middle of, as last seen
        self._held: set[str] = set()  # files seen while git was busy, processed once it is done
        self._held_checked = 0.0

    # ---- main thread ---------------------------------------------------------------

    def run(self) -> int:
        """Serve until SIGTERM/SIGINT; 0 after a clean stop, 1 if the worker failed."""
        allocator.tune()  # before the threads start: they allocate in what it allows
        openfiles.raise_soft_limit()  # before the server sizes what it holds from it
        self._take_workspace_lock()
        try:
            saved = daemonstatus.read(self.ws.root)
            self._status = DaemonStatus(last_scan_ns=saved.last_scan_ns, last_commit=saved.last_commit,
                                        last_repair=saved.last_repair, jobs=saved.jobs)
            self._install_signals()
            handler = watch.Handler(self.ws.root, self.queue, self._note_event)
            self._watches = watch.start_observer(self.ws.root, handler, self.queue)
            self.queue.request_rescan()
            # A daemon thread, so that a job overrunning the stop grace cannot hold the process (writes are atomic).
            worker = threading.Thread(target=self._work, name="kbsync-worker", daemon=True)
            worker.start()
            servers = [self._start_server(name, serve) for name, serve in self._servers]
            log.info("watching %s (pid %d)", self.ws.root, os.getpid())
            sd_notify("READY=1")
            while not self.stopping.wait(0.5) and worker.is_alive():
                pass
            sd_notify("STOPPING=1")
            self._stop_servers(servers)
            self._watches.stop()
            self.stopping.set()
            self.queue.wake()
            worker.join(STOP_GRACE_S)
            proc.kill_children()
            if worker.is_alive():
                log.error("the worker did not finish within %.0f s; exiting anyway", STOP_GRACE_S)
                return 1
        finally:
            fsio.unlock(status.lock_target(self.ws))
        log.info("stopped")
        return 1 if self.failed else 0

    def _start_server(self, name: str, serve: Server) -> threading.Thread:
        def run() -> None:
            try:
                serve(lambda: self.ws, self._servers_stop)
            except KbsyncError as exc:
                log.error("%s: %s; the daemon goes on without it", name, exc)
            except Exception:
                log.exception("%s stopped on an unexpected error; the daemon goes on without it", name)

        # A daemon thread: a server that overruns its stop cannot hold the process.
        thread = threading.Thread(target=run, name=f"kbsync-{name}", daemon=True)
        thread.start()
        return thread

    def _stop_servers(self, threads: list[threading.Thread]) -> None:
        self._servers_stop.set()
        deadline = time.monotonic() + SERVER_STOP_S
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                log.error("%s did not stop within %.0f s; exiting anyway", thread.name, SERVER_STOP_S)

    def _take_workspace_lock(self) -> None:
        target = status.lock_target(self.ws)
        target.parent.mkdir(parents=True, exist_ok=True)
        if not fsio.try_lock(target, LOCK_TTL_S):
            pid = status.daemon_pid(self.ws)
            raise LockedError(f"another `kbsync run` (pid {pid}) is already watching this workspace; "
                              "stop it first (or use that one)", path=str(self.ws.root))

    def _install_signals(self) -> None:
        def stop(signum: int, _frame: object) -> None:
            log.info("%s: finishing the work in hand, then a final commit", signal.Signals(signum).name)
            self.stopping.set()
            self.queue.wake()

        def reload(_signum: int, _frame: object) -> None:
            self._reload.set()
            self.queue.wake()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGHUP, reload)

    def _note_event(self, relpath: str) -> None:
        """Called on watchdog's thread: one attribute assignment, read by the worker."""
        self._status.last_event = {"path": relpath, "time": daemonstatus.stamp()}
        self._catchup.touched(relpath)
        self._dirty = True

    # ---- worker thread ---------------------------------------------------------------

    def _work(self) -> None:
        try:
            self._schedule()
            while not self.stopping.is_set():
                self._tick()
            self._jobs.stop(JOB_STOP_GRACE_S)
            self._commit("shutdown", settle=True)
        except Exception:
            log.exception("the worker stopped on an unexpected error")
            self.failed = True
            self.stopping.set()
        finally:
            self._save_status(force=True)

    def _tick(self) -> None:
        if self._reload.is_set():
            self._reload_config()
        if self.queue.take_rescan():
            self._watches.sync()
            self._catch_up()
        batch = self._unheld(self.queue.take_due())
        if batch:
            self._process_batch(batch)
        self._tend_jobs()
        self.checker.recheck_locked()
        if not len(self.queue) and self._scan_mark is not None:
            self._status.last_scan_ns, self._scan_mark = self._scan_mark, None
        if self._commit_wanted and not len(self.queue) and time.monotonic() >= self._commit_retry_at:
            reason, self._commit_wanted = self._commit_wanted, None
            self._commit(reason)
        self._scheduler.run_pending()
        self._save_status()
        self._release_when_settled()
        idle = self._scheduler.idle_seconds
        nap = LOCK_RECHECK_S if self.checker.locked else HELD_RECHECK_S if self._held else STATUS_EVERY_S if self._dirty else 5.0
        self.queue.wait(min(nap, max(idle if idle is not None else nap, 0.0)))

    def _release_when_settled(self) -> None:
        """After much work, once nothing is queued, pending or running, give the freed memory back."""
        if self._worked < RELEASE_AFTER_FILES or len(self.queue) or self._jobs.busy() or any(self._post_pending.values()):
            return
        self._worked = 0
        allocator.release()

    def _reload_config(self) -> None:
        self._reload.clear()
        sd_notify("RELOADING=1")
        try:
            ws = self._load()
        except KbsyncError as exc:
            log.error("configuration not reloaded: %s", exc)
        else:
            self.ws = self.checker.ws = Workspace(self.ws.root, ws.config)
            self.queue.quiet_s = ws.config.daemon.quiet_ms / 1000
            self._schedule()
            log.info("configuration reloaded")
        sd_notify("READY=1")

    def _schedule(self) -> None:
        self._scheduler.clear()
        for job in jobs.TIMED:
            seconds = max(1, round(job.interval(self.ws.config)))
            self._scheduler.every(seconds).seconds.do(self._run_timed, job)

    def _catch_up(self) -> None:
        """Queue what changed while nobody watched: uncommitted files and files newer than the last scan."""
        started = time.time_ns()
        since = self._status.last_scan_ns - MTIME_SLACK_NS
        try:
            dirty = {p for p in repo.changed_paths(self.ws.root) if not commit.is_runtime_path(p)}
        except KbsyncError as exc:
            log.warning("catch-up scan without git: %s", exc)
            dirty = set()
        recent = set()
        for rel, entry in self.ws.scan():  # one file at a time: only the recent ones are kept
            try:
                if entry.stat().st_mtime_ns >= since:
                    recent.add(rel)
            except FileNotFoundError:
                continue
        self._catchup = CatchUp(dirty, recent)
        for rel in self._catchup.queued:
            self.queue.touch(rel, now=True)
        self._scan_mark = started
        log.info("catch-up scan: %d file(s) to check", len(self._catchup.queued))

    def _process_batch(self, batch: list[str]) -> None:
        self._worked += len(batch)
        found = self.checker.check(batch, self.stopping, self._catchup)
        if found.session_closed:
            self._commit_wanted = "session"
        if found.changed:
            self._run_post_write(found.changed)
        self._dirty = True

    # ---- jobs and commits ---------------------------------------------------------------

    def _run_post_write(self, changed: list[str]) -> None:
        for job in jobs.POST_WRITE:
            self._post_pending.setdefault(job.name, set()).update(changed)
        self._submit_post_write()

    def _submit_post_write(self) -> None:
        """Hand each post-write job the paths gathered for it, once its previous run has ended."""
        for job in jobs.POST_WRITE:
            paths = sorted(self._post_pending.get(job.name, ()))
            if paths and self._jobs.submit(job.name, functools.partial(jobs.resolve(job.target), self.ws, paths)):
                self._post_pending[job.name] = set()

    def _tend_jobs(self) -> None:
        """Give waiting post-write paths to their jobs, abandon a job past its deadline, and record the timed
        jobs that ended."""
        self._submit_post_write()
        self._jobs.check()
        timed = {job.name for job in jobs.TIMED}
        for done in self._jobs.finished():
            if done.name in timed:
                self._status.jobs[done.name] = {"time": daemonstatus.stamp(), "ok": done.ok, "result": str(done.result)}
                self._dirty = True

    def _run_timed(self, job: jobs.TimedJob) -> None:
        try:
            if job.when and not jobs.resolve(job.when)(self.ws):
                return
            if not job.worker:  # on the job thread, with its deadline; _tend_jobs records how it ended
                self._jobs.submit(job.name, functools.partial(jobs.resolve(job.target), self.ws))
                return
            result = jobs.resolve(job.target)(self.ws)
        except Exception as exc:
            log.exception("job %s failed", job.name)
            self._status.jobs[job.name] = {"time": daemonstatus.stamp(), "ok": False, "result": str(exc)}
            return
        self._status.jobs[job.name] = {"time": daemonstatus.stamp(), "ok": True, "result": str(result)}
        if isinstance(result, commit.CommitResult):
            self._note_commit(result, commit.scheduled_reason(self.ws))

    def _sync_now(self) -> None:
        """Sync right after a commit (where a remote is configured), as the timed sync job would."""
        for job in jobs.TIMED:
            if job.name == "sync":
                self._run_timed(job)

    def _commit(self, reason: str, *, settle: bool = False) -> None:
        try:
            result = commit.commit_pending(self.ws, reason=reason, settle_s=quiet.bound(self.ws) if settle else 0)
            self._note_commit(result, reason)
        except KbsyncError as exc:
            log.error("%s commit failed: %s; will try again", reason, exc)
            self._retry_commit(reason)

    def _retry_commit(self, reason: str) -> None:
        self._commit_wanted = self._commit_wanted or reason
        self._commit_retry_at = time.monotonic() + COMMIT_RETRY_S

    def _note_commit(self, result: commit.CommitResult, reason: str) -> None:
        self._note_waiting(result.waiting)
        if result.blocked or result.waiting or "changing" in result.skipped.values():
            self._retry_commit(reason)  # e.g. a file this worker just repaired: it goes in once it is quiet
        if result.sha:
            log.info("committed %s: %s", result.sha[:7], result.message.splitlines()[0])
            self._status.last_commit = {"sha": result.sha, "time": daemonstatus.stamp(),
                                        "message": result.message.splitlines()[0]}
            if reason != "shutdown":
                self._sync_now()
        self._left_out = result.skipped
        self._dirty = True

    # ---- git in the middle of an operation ------------------------------------------------

    def _unheld(self, batch: list[str]) -> list[str]:
        """The files to process now: none while git is in the middle of an operation (they are held), and
        once it has ended, the held ones with the new."""
        if not batch and (not self._held or time.monotonic() - self._held_checked < HELD_RECHECK_S):
            return batch
        self._held_checked = time.monotonic()
        if self._note_waiting(inprogress.in_progress(self.ws.root)):
            self._held.update(batch)
            return []
        batch, self._held = sorted(self._held.union(batch)), set()
        return batch

    def _note_waiting(self, why: str | None) -> bool:
        """True while git is in the middle of an operation; its start and its end are logged once each."""
        if why != self._waiting:
            if why:
                log.warning("waiting: %s; nothing is repaired, committed or synced until it ends (files written "
                            "meanwhile stay on disk)", why)
            else:
                log.info("resuming: git is no longer in the middle of an operation (was: %s)", self._waiting)
            self._waiting = why
            self._dirty = True
        return why is not None

    # ---- status file ---------------------------------------------------------------------

    def _save_status(self, *, force: bool = False) -> None:
        if not force and (not self._dirty or time.monotonic() - self._saved_at < STATUS_EVERY_S):
            return
        locked = self.checker.locked
        record = dataclasses.replace(
            self._status, pid=os.getpid(), updated=daemonstatus.stamp(), skipped={**self._left_out, **self.checker.skipped},
            last_repair=self.checker.last_repair or self._status.last_repair,
            pending=sorted(set(self.queue.pending()) | locked)[:daemonstatus.PENDING_SHOWN],
            pending_count=len(self.queue) + len(locked))
        try:
            daemonstatus.write(self.ws.root, record)
        except OSError as exc:
            log.warning("%s: not written (%s)", daemonstatus.STATUS_FILE, exc)
        self._saved_at, self._dirty = time.monotonic(), False
