"""Browser sessions of the local server, kept in .kbsync/ so that they outlive a restart of the daemon.

- `.kbsync/web-sessions/<sha256 of a session id>`: one file (mode 0600) per browser session opened by a
  login link, holding its CSRF token, the hash of the API token it was opened under (rotating the token
  ends every session) and its expiry. Only the hash of the id (the cookie's value) is stored, so reading
  the folder gives no way in. Logging out deletes the file; expired files are removed as others are opened.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kbsync.app.web import write_private

if TYPE_CHECKING:
    from kbsync.store.workspace import Workspace

SESSIONS_DIR = "web-sessions"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class BrowserSession:
    csrf: str
    under: str  # a hash of the API token it was opened under: rotating the token ends it
    expires: float  # seconds since the epoch


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _file(ws: Workspace, sid: str) -> Path:
    return ws.state_dir / SESSIONS_DIR / digest(sid)


def open_session(ws: Workspace, token: str, ttl_s: float, now: float | None = None) -> tuple[str, BrowserSession]:
    """A new browser session under the API token `token`, lasting `ttl_s`: its id (the cookie) and itself."""
    at = time.time() if now is None else now
    prune(ws, at)
    sid = secrets.token_hex(32)
    session = BrowserSession(secrets.token_hex(32), digest(token), at + ttl_s)
    write_private(_file(ws, sid), json.dumps(asdict(session)).encode("ascii"))
    return sid, session


def find_session(ws: Workspace, sid: str, token: str, now: float | None = None) -> BrowserSession | None:
    """The live session `sid` names, or None (no such session, expired, or opened under another token)."""
    if not _HEX64.match(sid):
        return None
    found = _read(_file(ws, sid))
    if found is None:
        return None
    if found.expires < (time.time() if now is None else now) or not hmac.compare_digest(found.under, digest(token)):
        close_session(ws, sid)
        return None
    return found


def close_session(ws: Workspace, sid: str) -> None:
    """End session `sid` (logging out); nothing when there is none."""
    if _HEX64.match(sid):
        _file(ws, sid).unlink(missing_ok=True)


def prune(ws: Workspace, now: float) -> None:
    """Remove the files of expired (or unreadable) sessions."""
    folder = ws.state_dir / SESSIONS_DIR
    for path in folder.iterdir() if folder.is_dir() else []:
        if _HEX64.match(path.name):
            found = _read(path)
            if found is None or found.expires < now:
                path.unlink(missing_ok=True)


def _read(path: Path) -> BrowserSession | None:
    try:
        data = json.loads(path.read_text(encoding="ascii"))
        return BrowserSession(str(data["csrf"]), str(data["under"]), float(data["expires"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
