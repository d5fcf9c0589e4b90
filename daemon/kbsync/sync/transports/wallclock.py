"""HTTP requests with a wall-clock bound.

requests' `timeout` bounds each read of the socket, not the request: a server that sends its answer one byte
a second never times out. `WallClock` mounts an adapter on a `requests.Session` whose connections make
themselves known to the request running on their thread; `send` starts a timer for the bound, and when it
fires first the connection's socket is shut down, which ends whatever read or write was waiting on it, and
the request fails with `requests.Timeout`. Connecting is bounded by requests' own connect timeout; a socket
connected after the bound is shut down as soon as it is known.
"""

from __future__ import annotations

import socket
import threading
from typing import Any, Callable

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.poolmanager import PoolManager

RECHECK_S = 0.1  # after the bound, how often a connection still connecting is looked at again

_local = threading.local()  # .watch: the Watch of the request this thread is sending, if any


class Watch:
    """One request's bound: the connections it used, and whether the bound passed before it ended."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._lock = threading.Lock()
        self._connections: list[HTTPConnection] = []
        self._fired = False
        self._done = False
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def start(self) -> None:
        self._timer.start()

    def attach(self, conn: HTTPConnection) -> None:
        with self._lock:
            self._connections.append(conn)
            if self._fired:
                _shut(conn)

    def finish(self) -> bool:
        """End the watch; True if the bound passed first (the request's outcome is then not to be trusted)."""
        with self._lock:
            self._done = True
            self._timer.cancel()
            return self._fired

    def _fire(self) -> None:
        with self._lock:
            if self._done:
                return
            self._fired = True
            for conn in self._connections:
                _shut(conn)
            self._timer = threading.Timer(RECHECK_S, self._fire)  # a connection may still be connecting
            self._timer.daemon = True
            self._timer.start()


def _shut(conn: HTTPConnection) -> None:
    """Shut the connection's socket down (both ways), from any thread: a blocked read or write returns at
    once. The plain socket's method is used on a TLS socket too, so the TLS object is left as it is for the
    thread using it."""
    sock = conn.sock
    if isinstance(sock, socket.socket):
        try:
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except OSError:  # already closed or never connected
            pass


class _Announcing:
    """Mixed into urllib3's connections: each request made on one is attached to its thread's watch."""

    def request(self, *args: Any, **kwargs: Any) -> None:
        watch: Watch | None = getattr(_local, "watch", None)
        if watch is not None:
            watch.attach(self)  # type: ignore[arg-type]
        super().request(*args, **kwargs)  # type: ignore[misc]


class _HTTPConnection(_Announcing, HTTPConnection):
    pass


class _HTTPSConnection(_Announcing, HTTPSConnection):
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


def _announce(manager: PoolManager) -> PoolManager:
    manager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}
    return manager


class WallClockAdapter(HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        _announce(self.poolmanager)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        return _announce(manager) if isinstance(manager, PoolManager) else manager


def mount(session: requests.Session) -> requests.Session:
    """`session` with its http and https requests able to be bounded by `send`."""
    adapter = WallClockAdapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def send(seconds: float, request: Callable[[], requests.Response]) -> requests.Response:
    """`request()` (on a session given to `mount`, its body read whole) ended within `seconds` of now;
    requests.Timeout when it was not."""
    watch = Watch(seconds)
    _local.watch = watch
    watch.start()
    try:
        resp = request()
    except requests.RequestException as exc:
        if watch.finish():
            raise requests.Timeout(f"no complete answer within {seconds:.3g} s") from exc
        raise
    finally:
        _local.watch = None
        watch.finish()
    if watch.finish():
        resp.close()
        raise requests.Timeout(f"no complete answer within {seconds:.3g} s")
    return resp
