"""Serving the application: check [web], bind, listen, announce the server in .kbsync/web.json, serve
until stopped, withdraw the announcement.

uvicorn always runs on a thread of its own with its own event loop (in the daemon beside the worker,
under `kbsync web serve` beside the main thread that takes the signals), so it never installs signal
handlers, and a stop is the same everywhere: an event is set, uvicorn finishes the requests in hand
within STOP_GRACE_S, the announcement is withdrawn.

Which connections are held (a complete request head within seconds, at most as many as the open-files
limit leaves room for, the surplus closed at accept) is kbsync.web.admission's job.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import signal
import socket
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, AsyncContextManager, AsyncIterator, Callable, Sequence

from kbsync import openfiles
from kbsync.app.web import ServerInfo, announce_server, api_token, running_server, withdraw_server
from kbsync.app.workspace import Workspace
from kbsync.errors import ConfigError, UnavailableError

if TYPE_CHECKING:
    import uvicorn
    from starlette.types import ASGIApp, Receive, Scope, Send

    from kbsync.web.admission import Tally

log = logging.getLogger(__name__)

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
WILDCARDS = ("0.0.0.0", "::", "")
STOP_GRACE_S = 3
LISTEN_QUEUE = 1024  # connections the kernel completes and queues before they are accepted: a burst beyond it
# is dropped by the kernel (a client then waits for its retry), so it is larger than one turn's accept batch


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_host(ws: Workspace) -> None:
    """ConfigError unless [web] host is loopback or allow_remote says otherwise."""
    cfg = ws.config.web
    if not is_loopback(cfg.host) and not cfg.allow_remote:
        raise ConfigError(f"web.host = {cfg.host!r} is not a loopback address; kbsync serves 127.0.0.1 unless "
                          "[web] allow_remote = true (unsafe: anyone who reaches the port can try the token)",
                          path=ws.config.source)


def _bind_address(host: str) -> str:
    return "127.0.0.1" if host == "localhost" else host.strip("[]")


def _url_host(host: str) -> str:
    """The host a person on this machine types: a wildcard's loopback, an IPv6 address in brackets."""
    if host in WILDCARDS:
        return "[::1]" if host == "::" else "127.0.0.1"
    address = _bind_address(host)
    return f"[{address}]" if ":" in address else address


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """The Host headers the server answers: its loopback names, the host it was given, and for a
    wildcard (with allow_remote) this machine's names."""
    names = {*LOOPBACK_NAMES, _url_host(host)}
    if host in WILDCARDS:
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    elif not is_loopback(host):
        names.add(host.lower())
    return frozenset(f"{name}:{port}" for name in names)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket; UnavailableError naming the address when it is taken.

    Made with the protocol named (IPPROTO_TCP): asyncio turns Nagle's algorithm off only on connections whose
    socket says it is TCP, and a response is written in two parts (head, body), so with Nagle on every
    answer on a kept-alive connection waited for the client's delayed ACK, some 40 ms. TCP_NODELAY is set on
    the listener too; accepted connections inherit it.
    """
    address = _bind_address(host)
    sock = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM,
                         socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((address, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise UnavailableError(f"cannot listen on {_url_host(host)}:{port} ({exc.strerror}); stop what uses it, "
                               "or set [web] port to another (0 = any free port)") from exc
    return sock


@dataclass
class Running:
    """A bound server, ready to serve until its stop event is set."""

    ws: Workspace
    sock: socket.socket
    server: uvicorn.Server
    info: ServerInfo
    tally: Tally
    lifespans: Sequence[Callable[[], AsyncContextManager[None]]] = field(default=())

    def serve(self, stop: threading.Event) -> None:
        from kbsync.web.admission import UVICORN_LOGGER, Repeats

        repeats = Repeats(self.tally)
        logging.getLogger(UVICORN_LOGGER).addFilter(repeats)
        try:
            asyncio.run(self._serve(stop))
        finally:
            logging.getLogger(UVICORN_LOGGER).removeFilter(repeats)
            withdraw_server(self.ws, self.info.pid)
            self.sock.close()
            log.info("the HTTP API at %s stopped", self.info.url)

    async def _serve(self, stop: threading.Event) -> None:
        from kbsync.web.admission import loop_errors

        asyncio.get_running_loop().set_exception_handler(loop_errors(self.tally))
        async with contextlib.AsyncExitStack() as mounted:  # what a mounted app needs while it is served
            for lifespan in self.lifespans:
                await mounted.enter_async_context(lifespan())
            await self._serve_until(stop)

    async def _serve_until(self, stop: threading.Event) -> None:
        task = asyncio.create_task(self.server.serve(sockets=[self.sock]))
        announced = False
        while not task.done():
            if self.server.started and not announced:
                with contextlib.suppress(OSError):  # closed already, when a stop came at once
                    self.sock.listen(LISTEN_QUEUE)  # asyncio listened with its accept batch (admission.BACKLOG)
                announce_server(self.ws, self.info)
                log.info("serving the HTTP API at %s (docs/http-api.md)", self.info.url)
                announced = True
            if stop.is_set():
                self.server.should_exit = True
            await asyncio.wait({task}, timeout=0.05)
        task.result()


Lifespan = Callable[[], AsyncContextManager[None]]


@dataclass(frozen=True)
class Mounted:
    """An app another door serves on this server (the MCP server at /mcp), behind the same guard; `lifespan`,
    if given, is entered for as long as the server serves."""

    path: str
    app: ASGIApp
    lifespan: Lifespan | None = None

    @classmethod
    def lazily(cls, path: str, make: Callable[[], tuple[ASGIApp, Lifespan | None]]) -> Mounted:
        """An app made only when its first request comes (see LazyApp)."""
        lazy = LazyApp(make)
        return cls(path, lazy, lazy.lifespan)


class LazyApp:
    """An ASGI app made at its first request, with its lifespan entered then and left when the server stops.

    The MCP SDK takes about half a second and 25 MB to import; a server that no client asks for MCP never
    pays for it. The app's lifespan (a task group) is entered and left by one task of its own, which lives
    as long as the server serves, as the SDK requires; requests wait until it is ready.
    """

    def __init__(self, make: Callable[[], tuple[ASGIApp, Lifespan | None]]) -> None:
        self._make = make
        self._app: ASGIApp | None = None
        self._failed: BaseException | None = None
        self._wanted: asyncio.Event | None = None
        self._ready: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._wanted is None or self._ready is None:
            raise RuntimeError("LazyApp served outside its lifespan")
        self._wanted.set()
        await self._ready.wait()
        if self._app is None:
            from kbsync.web.problems import error_response

            await error_response(503, "unavailable", f"{scope['path']} could not be started ({self._failed}); "
                                 "the server's log has the details")(scope, receive, send)
            return
        await self._app(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        self._wanted, self._ready, self._stop = asyncio.Event(), asyncio.Event(), asyncio.Event()
        runner = asyncio.create_task(self._run())
        try:
            yield
        finally:
            self._stop.set()
            self._wanted.set()
            await runner

    async def _run(self) -> None:
        assert self._wanted is not None and self._ready is not None and self._stop is not None
        await self._wanted.wait()
        if self._stop.is_set():
            return
        try:
            app, lifespan = await asyncio.to_thread(self._make)
        except Exception as exc:  # answered 503 to every request; the server goes on
            log.exception("a mounted app could not be made")
            self._failed = exc
            self._ready.set()
            return
        async with contextlib.AsyncExitStack() as stack:
            if lifespan is not None:
                await stack.enter_async_context(lifespan())
            self._app = app
            self._ready.set()
            await self._stop.wait()


Mounts = Callable[[Callable[[], Workspace]], Sequence[Mounted]]  # the workspace's getter -> what to mount


def open_server(current: Callable[[], Workspace], mounts: Mounts | None = None) -> Running:
    """Check [web], make the API token if there is none, bind; the server, not yet serving."""
    import uvicorn

    from kbsync.web.admission import BACKLOG, Admission, GuardedProtocol, Tally, connection_limit
    from kbsync.web.asgi import guarded

    ws = current()
    check_host(ws)
    other = running_server(ws)
    if other is not None and other.pid != os.getpid():
        raise UnavailableError(f"a server for this workspace already runs at {other.url} (pid {other.pid}); use it, "
                               "or stop it first", path=str(ws.root))
    api_token(ws)
    sock = bind(ws.config.web.host, ws.config.web.port)
    port = int(sock.getsockname()[1])
    info = ServerInfo(f"http://{_url_host(ws.config.web.host)}:{port}", port, os.getpid())
    extra = list(mounts(current)) if mounts else []
    app = guarded(current, base_url=info.url, hosts=allowed_hosts(ws.config.web.host, port), port=port,
                  max_body=ws.config.web.max_body_kb * 1024, mounts=[(m.path, m.app) for m in extra])
    tally = Tally()
    protocol = GuardedProtocol.for_admission(Admission(connection_limit(), tally))
    config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False, lifespan="off",
                            server_header=False, proxy_headers=False, loop="asyncio", http=protocol, ws="none",
                            timeout_graceful_shutdown=STOP_GRACE_S, backlog=BACKLOG)
    return Running(ws, sock, uvicorn.Server(config), info, tally, [m.lifespan for m in extra if m.lifespan])


def daemon_server(ws: Workspace, mounts: Mounts | None = None
                  ) -> Callable[[Callable[[], Workspace], threading.Event], None] | None:
    """What the daemon runs for the web door: None when [web] is not enabled; ConfigError now (before the
    daemon starts) for a host that may not be served."""
    if not ws.config.web.enabled:
        return None
    check_host(ws)

    def serve(current: Callable[[], Workspace], stop: threading.Event) -> None:
        open_server(current, mounts).serve(stop)
    return serve


def serve_foreground(ws: Workspace, mounts: Mounts | None = None) -> int:
    """`kbsync web serve`: serve until SIGINT or SIGTERM; 0 after a clean stop."""
    openfiles.raise_soft_limit()
    running = open_server(lambda: ws, mounts)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda _signum, _frame: stop.set())
    failed: list[BaseException] = []

    def run() -> None:
        try:
            running.serve(stop)
        except BaseException as exc:  # handed to the main thread, which reports it
            failed.append(exc)

    thread = threading.Thread(target=run, name="kbsync-web", daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(0.2)
    if failed:
        raise failed[0]
    return 0
