"""The local server's state in .kbsync/: its API token, its one-time login links, where it listens.

- `.kbsync/web-token`: 256 random bits as 64 hex digits, mode 0600, made on first use and replaced
  by `rotate_token`.
- `.kbsync/web-login/<sha256 of a login token>`: one file (mode 0600) per login link not used yet,
  holding its expiry. Using a link deletes its file, so a link works once: of two requests racing
  with it, only the one whose unlink succeeds logs in. Only the hash is stored.
- `.kbsync/web.json`: `url`, `port` and `pid` of the server listening for this workspace, written
  atomically once it listens and removed when it stops.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kbsync.errors import UnavailableError, UsageError
from kbsync.store import fsio

if TYPE_CHECKING:
    from kbsync.store.workspace import Workspace

log = logging.getLogger(__name__)

TOKEN_FILE = "web-token"
LOGIN_DIR = "web-login"
SERVER_FILE = "web.json"
LOGIN_TTL_S = 300.0
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class ServerInfo:
    url: str  # e.g. http://127.0.0.1:8420, no trailing slash
    port: int
    pid: int


def _new_token() -> str:
    """256 random bits as 64 hex digits (secrets imported here: a hook that only reads the token is spared
    the start-up of its random module)."""
    import secrets

    return secrets.token_hex(32)


def token_path(ws: Workspace) -> Path:
    return ws.state_dir / TOKEN_FILE


def write_private(path: Path, data: bytes) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fsio.atomic_write_all({path: data}, mode=0o600)


def _read_token(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the API token ({exc}); run `kbsync web token --rotate`", path=str(path)) from exc
    if not _HEX64.match(text):
        raise UsageError("the API token is not 64 hex digits; run `kbsync web token --rotate`", path=str(path))
    return text


def api_token(ws: Workspace) -> str:
    """The API token, made (256 random bits, mode 0600) if there is none yet."""
    path = token_path(ws)
    found = _read_token(path)
    if found is not None:
        return found
    ws.state_dir.mkdir(parents=True, exist_ok=True)
    with fsio.locked(path, wait_s=ws.config.daemon.lock_wait_s):  # two first starts make one token
        found = _read_token(path)
        if found is None:
            found = _new_token()
            write_private(path, f"{found}\n".encode("ascii"))
    return found


def rotate_token(ws: Workspace) -> str:
    """A new API token in place of the old one; the old one stops working at once, and so do sessions
    opened with it (a running server rereads the file)."""
    path = token_path(ws)
    ws.state_dir.mkdir(parents=True, exist_ok=True)
    token = _new_token()
    with fsio.locked(path, wait_s=ws.config.daemon.lock_wait_s):
        write_private(path, f"{token}\n".encode("ascii"))
    return token


class TokenCache:
    """The API token as the server checks it: reread only when the file changed (a rotation replaces it)."""

    def __init__(self, ws: Workspace) -> None:
        self._ws = ws
        self._seen: tuple[int, int, int] | None = None
        self._token = ""

    def current(self) -> str:
        path = token_path(self._ws)
        try:
            st = path.stat()
        except FileNotFoundError:
            return api_token(self._ws)
        seen = (st.st_ino, st.st_mtime_ns, st.st_size)
        if seen != self._seen:
            if st.st_mode & 0o077:
                log.warning("%s: readable by others; made private (rotate it if others may have read it)", path)
                path.chmod(0o600)
            self._token, self._seen = api_token(self._ws), seen
        return self._token

    def matches(self, given: str) -> bool:
        return hmac.compare_digest(given.encode("utf-8", "replace"), self.current().encode("ascii"))


# ---- one-time login links ---------------------------------------------------------------

def _login_file(ws: Workspace, token: str) -> Path:
    return ws.state_dir / LOGIN_DIR / hashlib.sha256(token.encode("ascii")).hexdigest()


def new_login_token(ws: Workspace, now: float | None = None) -> str:
    """A login token that works once, for LOGIN_TTL_S seconds; expired ones left by others are removed."""
    at = time.time() if now is None else now
    _prune_logins(ws, at)
    token = _new_token()
    write_private(_login_file(ws, token), json.dumps({"expires": at + LOGIN_TTL_S}).encode("ascii"))
    return token


def _prune_logins(ws: Workspace, now: float) -> None:
    folder = ws.state_dir / LOGIN_DIR
    for path in folder.iterdir() if folder.is_dir() else []:
        if _HEX64.match(path.name) and _expires(path) < now:
            path.unlink(missing_ok=True)


def _expires(path: Path) -> float:
    try:
        value = json.loads(path.read_text(encoding="ascii"))["expires"]
        return float(value)
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0  # unreadable: treated as expired


def use_login_token(ws: Workspace, token: str, now: float | None = None) -> bool:
    """True, once, for a login token made by `new_login_token` that has not expired."""
    if not _HEX64.match(token):
        return False
    path = _login_file(ws, token)
    expires = _expires(path)
    try:
        path.unlink()
    except FileNotFoundError:
        return False  # never made, or used already
    return (time.time() if now is None else now) <= expires


def login_url(ws: Workspace) -> str:
    """The URL a person opens to log in to the running server (its token works once)."""
    info = running_server(ws)
    if info is None:
        raise UnavailableError("no local server is running for this workspace; start `kbsync run` (with [web] "
                               "enabled) or `kbsync web serve`", path=str(ws.root))
    return f"{info.url}/login?token={new_login_token(ws)}"


# ---- where the server listens --------------------------------------------------------------

def server_file(ws: Workspace) -> Path:
    return ws.state_dir / SERVER_FILE


def running_server(ws: Workspace) -> ServerInfo | None:
    """The server .kbsync/web.json names, if its process still runs."""
    try:
        data = json.loads(server_file(ws).read_text(encoding="utf-8"))
        info = ServerInfo(str(data["url"]), int(data["port"]), int(data["pid"]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("%s: unreadable (%s); ignoring it", server_file(ws), exc)
        return None
    return info if fsio.pid_alive(info.pid) else None


def announce_server(ws: Workspace, info: ServerInfo) -> None:
    """Write .kbsync/web.json atomically (the server calls this once it listens)."""
    ws.state_dir.mkdir(parents=True, exist_ok=True)
    fsio.atomic_write(server_file(ws), json.dumps(asdict(info), indent=1).encode("utf-8") + b"\n")


def withdraw_server(ws: Workspace, pid: int) -> None:
    """Remove .kbsync/web.json if it still names process `pid` (another server may have replaced it)."""
    try:
        named = json.loads(server_file(ws).read_text(encoding="utf-8")).get("pid")
    except (OSError, ValueError, AttributeError):
        return
    if named == pid:
        server_file(ws).unlink(missing_ok=True)
