"""The door's guard: every request passes it first, whatever it is for (the API, the login link, the
page, an app mounted beside the API), because a web page open in the same browser can reach a server
on 127.0.0.1 too.

In order, each check answering in the API's error shape:
1. Host must be one of the server's own names with its port (403): a DNS-rebinding page has its own.
2. Origin, when sent, must be the server's own (403). No CORS header is ever sent, so no other
   origin can read an answer.
3. GET /login?token=... with a login token `kbsync web url` made: used once, it opens a browser
   session (an HttpOnly, SameSite=Strict cookie, kept in .kbsync/ so that it outlives a restart, for
   [web] session_days) and redirects to / without the token; GET /login without a token, or with one
   used or expired, is a short page saying to run `kbsync web url`. POST /logout (a form with the CSRF
   token) ends the session. The package's own static files (/static/, CSS and scripts) need no login.
4. Authentication: `Authorization: Bearer <API token>` or that session cookie (401; a browser's GET
   of a page, Accept text/html outside /api/, is redirected to /login instead; a page's form posted
   after its login ended is kept, in memory, and offered back to be sent again once logged in).
5. A POST, PUT or PATCH (or a DELETE with a body, or any DELETE of a browser session) must be
   `Content-Type: application/json`, which a page of another origin cannot send without a preflight
   that is refused; a page of this server may instead send its session's CSRF token in
   `X-CSRF-Token`, or a form of its pages (application/x-www-form-urlencoded) its `csrf` field (a
   form type without either: 403 `csrf`; any other type: 415).
6. The body is read whole before the request goes on, and refused past [web] max_body_kb (413).
Every response gets nosniff, X-Frame-Options DENY, a strict Content-Security-Policy, a same-origin referrer policy
and no-store, and loses any Access-Control-* header a mounted app might add.
"""

from __future__ import annotations

import hmac
import time
from typing import Callable
from urllib.parse import parse_qs

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import cookie_parser
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kbsync.app.web import TokenCache, use_login_token
from kbsync.app.websessions import BrowserSession, close_session, find_session, open_session
from kbsync.app.workspace import Workspace
from kbsync.web import loginpages
from kbsync.web.problems import error_response

SECURITY_HEADERS = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "content-security-policy": ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                                "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
    "referrer-policy": "same-origin",  # no-referrer would make a browser send `Origin: null` with its forms
    "cache-control": "no-store",
    "cross-origin-resource-policy": "same-origin",
}
WRITES = ("POST", "PUT", "PATCH")
FORM = "application/x-www-form-urlencoded"
FORM_TYPES = (FORM, "multipart/form-data", "text/plain")
CSRF_FIELD = "csrf"
LOGIN_PATH = "/login"
LOGOUT_PATH = "/logout"
RESUME_PATH = "/login/resume"
STATIC_PREFIX = "/static/"


class Sessions:
    """Browser sessions opened by login links, kept in .kbsync/ (kbsync.app.websessions): a restart keeps
    them; a rotation of the API token, their expiry or a log-out ends them."""

    def __init__(self, current: Callable[[], Workspace], tokens: TokenCache,
                 clock: Callable[[], float] = time.time) -> None:
        self._current = current
        self._tokens = tokens
        self._clock = clock

    def open(self) -> str:
        ws = self._current()
        sid, _session = open_session(ws, self._tokens.current(), ws.config.web.session_days * 86400.0, self._clock())
        return sid

    def get(self, sid: str) -> BrowserSession | None:
        return find_session(self._current(), sid, self._tokens.current(), self._clock())

    def close(self, sid: str) -> None:
        close_session(self._current(), sid)


def _with_security_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for name in [k for k in headers.keys() if k.startswith("access-control-")]:
                del headers[name]
            for name, value in SECURITY_HEADERS.items():
                headers[name] = value
        await send(message)
    return sending


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body, or None once it passes `limit` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replaying(body: bytes, receive: Receive) -> Receive:
    given = False

    async def replay() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()
    return replay


class Guard:
    """ASGI middleware in front of the whole application (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, current: Callable[[], Workspace], tokens: TokenCache, hosts: frozenset[str],
                 cookie: str, max_body: int) -> None:
        self.app = app
        self.current = current
        self.tokens = tokens
        self.sessions = Sessions(current, tokens)
        self.pending = loginpages.PendingForms()
        self.hosts = frozenset(h.lower() for h in hosts)
        self.origins = frozenset(f"http://{h}" for h in self.hosts)
        self.cookie = cookie
        self.pending_cookie = f"{cookie}_kept"
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self.app(scope, receive, send)
            return  # websockets are not served
        send = _with_security_headers(send)
        headers = Headers(scope=scope)
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        if scope["path"] == LOGIN_PATH and scope["method"] == "GET":
            await (await run_in_threadpool(self._login, scope))(scope, receive, send)  # files: off the loop
            return
        if scope["path"].startswith(STATIC_PREFIX) and scope["method"] in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        who = await self._who(headers)
        if who is None and _browser_form(scope, headers):
            await self._keep_form(scope, receive, send)
            return
        refusal = self._unauthorised(scope, headers, who)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        scope.setdefault("state", {})["browser_session"] = who
        if isinstance(who, BrowserSession) and scope["path"] in (LOGOUT_PATH, RESUME_PATH):
            await self._own_page(scope, receive, send, headers, who)
            return
        await self._forward(scope, receive, send, headers, _form_token_needed(scope, headers, who))

    def _refusal(self, scope: Scope, headers: Headers) -> Response | None:
        host = headers.get("host", "").lower()
        if host not in self.hosts:
            return error_response(403, "forbidden", f"Host {host or '(none)'!r} is not this server's; use "
                                                    f"{sorted(self.hosts)[0]}")
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self.origins:
            return error_response(403, "forbidden", f"Origin {origin!r} may not call this server")
        return None

    def _login(self, scope: Scope) -> Response:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        token = query.get("token", [""])[0]
        if not token:
            return HTMLResponse(loginpages.login_page("out" if query.get("out") else "none"))
        if not use_login_token(self.current(), token):
            return HTMLResponse(loginpages.login_page("used"), status_code=401)
        kept = self._kept_id(Headers(scope=scope))
        response = RedirectResponse(RESUME_PATH if kept else "/", status_code=303)
        response.set_cookie(self.cookie, self.sessions.open(), httponly=True, samesite="strict", path="/",
                            max_age=int(self.current().config.web.session_days * 86400))
        return response

    def _kept_id(self, headers: Headers) -> str | None:
        kept = cookie_parser(headers.get("cookie", "")).get(self.pending_cookie)
        return kept if kept and self.pending.has(kept) else None

    async def _keep_form(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A page's form posted without a live login: kept (in memory, bounded) and the person told how to
        log in and send it again; nothing of it is acted on."""
        body = await _read_body(receive, self.max_body)
        kept = self.pending.keep(scope["path"], body) if body is not None else None
        response = HTMLResponse(loginpages.login_page("expired", kept=kept is not None), status_code=401)
        if kept is not None:
            response.set_cookie(self.pending_cookie, kept, httponly=True, samesite="strict", path="/",
                                max_age=int(loginpages.KEEP_S))
        await response(scope, receive, send)

    async def _own_page(self, scope: Scope, receive: Receive, send: Send, headers: Headers,
                        who: BrowserSession) -> None:
        """POST /logout (its form's CSRF token checked) and GET /login/resume (a kept form, offered back)."""
        if scope["path"] == LOGOUT_PATH and scope["method"] == "POST":
            body = await _read_body(receive, self.max_body)
            if body is None or not _form_has_token(body, who.csrf):
                await _csrf_refusal()(scope, receive, send)
                return
            await run_in_threadpool(self.sessions.close, cookie_parser(headers.get("cookie", "")).get(self.cookie, ""))
            response: Response = RedirectResponse(f"{LOGIN_PATH}?out=1", status_code=303)
            response.delete_cookie(self.cookie, path="/")
        elif scope["path"] == RESUME_PATH and scope["method"] in ("GET", "HEAD"):
            kept = self._kept_id(headers)
            form = self.pending.take(kept) if kept else None
            response = HTMLResponse(loginpages.resume_page(form, CSRF_FIELD, who.csrf))
            response.delete_cookie(self.pending_cookie, path="/")
        else:
            response = error_response(405, "method_not_allowed", f"{scope['method']} {scope['path']} is not served")
        await response(scope, receive, send)

    async def _who(self, headers: Headers) -> BrowserSession | str | None:
        """"bearer" for a request with the API token, its BrowserSession for one with a session cookie (read from
        its file in the thread pool, never on the event loop)."""
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and given.strip() and self.tokens.matches(given.strip()):
            return "bearer"
        sid = cookie_parser(headers.get("cookie", "")).get(self.cookie)
        return await run_in_threadpool(self.sessions.get, sid) if sid else None

    def _unauthorised(self, scope: Scope, headers: Headers, who: BrowserSession | str | None) -> Response | None:
        if who is None and _browser_page(scope, headers):
            return RedirectResponse(LOGIN_PATH, status_code=303)
        if who is None:
            return error_response(401, "unauthorized", "send `Authorization: Bearer <token>` (`kbsync web token` "
                                                       "prints it), or log in with `kbsync web url`",
                                  headers={"www-authenticate": 'Bearer realm="kbsync"'})
        method = scope["method"]
        if method in WRITES or (method == "DELETE" and (_has_body(headers) or isinstance(who, BrowserSession))):
            return self._content_refusal(headers, who)
        return None

    def _content_refusal(self, headers: Headers, who: BrowserSession | str) -> Response | None:
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        if kind == "application/json":
            return None
        csrf = headers.get("x-csrf-token", "")
        if isinstance(who, BrowserSession) and csrf and hmac.compare_digest(csrf, who.csrf):
            return None
        if kind == FORM and isinstance(who, BrowserSession):
            return None  # its csrf field is checked once the body is read (_forward)
        if kind in FORM_TYPES:
            return _csrf_refusal()
        return error_response(415, "unsupported_media_type", f"Content-Type {kind or '(none)'!r}: send JSON with "
                                                              "Content-Type: application/json")

    async def _forward(self, scope: Scope, receive: Receive, send: Send, headers: Headers,
                       form_token: str | None) -> None:
        too_big = error_response(413, "too_large", f"the body is over {self.max_body // 1024} KB ([web] "
                                                   "max_body_kb); send less", headers={"connection": "close"})
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_body:
            await too_big(scope, receive, send)
            return
        if scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive, self.max_body)
        if body is None:
            await too_big(scope, receive, send)
            return
        if form_token is not None and not _form_has_token(body, form_token):
            await _csrf_refusal()(scope, receive, send)
            return
        await self.app(scope, _replaying(body, receive), send)


def _has_body(headers: Headers) -> bool:
    return headers.get("content-length", "0") not in ("", "0") or "transfer-encoding" in headers


def _csrf_refusal() -> Response:
    return error_response(403, "csrf", "a form needs this server's CSRF token (its csrf field, or X-CSRF-Token); "
                                       "an API call needs Content-Type: application/json")


def _browser_form(scope: Scope, headers: Headers) -> bool:
    """A browser posting one of the pages' forms (not the API, not a mounted app)."""
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    return (scope["method"] == "POST" and kind == FORM and "text/html" in headers.get("accept", "")
            and not scope["path"].startswith(("/api/", "/mcp")))


def _browser_page(scope: Scope, headers: Headers) -> bool:
    """A browser asking for a page (not the API, not a mounted app's JSON): sent to the login page."""
    path = scope["path"]
    return (scope["method"] in ("GET", "HEAD") and "text/html" in headers.get("accept", "")
            and not path.startswith(("/api/", "/mcp")))


def _form_token_needed(scope: Scope, headers: Headers, who: BrowserSession | str | None) -> str | None:
    """The CSRF token a form's body must carry (a browser session's form write or delete without X-CSRF-Token,
    which _content_refusal let through for this check), or None."""
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    if scope["method"] in ("GET", "HEAD", "OPTIONS") or kind != FORM or not isinstance(who, BrowserSession):
        return None
    given = headers.get("x-csrf-token", "")
    return None if given and hmac.compare_digest(given, who.csrf) else who.csrf


def _form_has_token(body: bytes, token: str) -> bool:
    given = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).get(CSRF_FIELD, [""])[0]
    return bool(given) and hmac.compare_digest(given.encode(), token.encode())
