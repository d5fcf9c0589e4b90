"""The server's listening socket: every accepted connection sends small writes at once (no Nagle)."""

from __future__ import annotations

import asyncio
import socket

from kbsync.web.server import bind


def _nodelay_of_accepted(sock: socket.socket) -> int:
    """TCP_NODELAY of a connection accepted by an asyncio server on `sock` (as uvicorn serves it)."""
    seen: list[int] = []

    async def main() -> None:
        async def handle(_r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            seen.append(w.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            w.close()

        server = await asyncio.start_server(handle, sock=sock)
        port = sock.getsockname()[1]
        _reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while not seen:
            await asyncio.sleep(0.01)
        writer.close()
        server.close()

    asyncio.run(asyncio.wait_for(main(), 10))
    return seen[0]


def test_accepted_connections_have_nagle_off() -> None:
    """A response goes out as a head and a body; with Nagle on, each answer on a kept-alive connection would
    wait for the client's delayed ACK (about 40 ms)."""
    sock = bind("127.0.0.1", 0)
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    assert _nodelay_of_accepted(sock)
