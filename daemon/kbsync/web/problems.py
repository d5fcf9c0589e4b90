"""Errors as the API answers them: `{"error": {"code", "message", "field"?, "path"?}}` with the status
that says what kind of problem it is. Every kbsync error maps by its class; nothing else leaks a
traceback (an unexpected error is logged and answered 500 `internal`)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Sequence

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from kbsync import errors
from kbsync.web.models import ErrorBody, ErrorDetail, FieldProblem

log = logging.getLogger(__name__)

# Most specific first: the first class an error is an instance of gives its status and code.
STATUS_OF: tuple[tuple[type[Exception], int, str], ...] = (
    (errors.NotFoundError, 404, "not_found"),
    (errors.LockedError, 409, "locked"),
    (errors.StaleError, 409, "stale"),
    (errors.ConflictError, 409, "conflict"),
    (errors.ProtocolError, 409, "protocol"),
    (errors.SecretFoundError, 422, "secret"),
    (errors.UsageError, 400, "bad_request"),
    (errors.InputError, 422, "invalid"),
    (errors.ConfigError, 503, "unavailable"),
    (errors.KbsyncError, 503, "unavailable"),  # git, the remote, a program or database of this machine
    (OSError, 503, "unavailable"),
)
HTTP_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
              405: "method_not_allowed", 409: "conflict", 413: "too_large", 415: "unsupported_media_type",
              422: "invalid", 503: "unavailable"}
DOCUMENTED = (400, 401, 403, 404, 409, 413, 415, 422, 503)
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {code: {"model": ErrorBody, "description": HTTP_CODES[code]}
                                                    for code in DOCUMENTED}


def error_response(status: int, code: str, message: str, *, field: str | None = None, path: str | None = None,
                   details: Sequence[FieldProblem] | None = None, headers: dict[str, str] | None = None,
                   stale: errors.StaleError | None = None) -> JSONResponse:
    extra: dict[str, Any] = {} if stale is None else {"version": stale.version, "current": stale.current,
                                                      "changed": list(stale.changed)}
    body = ErrorBody(error=ErrorDetail(code=code, message=message, field=field, path=path,
                                       details=list(details) if details else None, **extra))
    return JSONResponse(body.model_dump(exclude_none=True), status_code=status, headers=headers)


def _relative(path: str | None, root: Path) -> str | None:
    """A workspace file's path as the workspace names it (errors from below may give it absolute)."""
    if path is None:
        return None
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return path


def kbsync_error(request: Request, exc: Exception) -> JSONResponse:
    status, code = next((s, c) for cls, s, c in STATUS_OF if isinstance(exc, cls))
    if isinstance(exc, errors.KbsyncError):
        path = _relative(exc.path, request.app.state.current().root)
        where = "" if path is None else f"{path}:{exc.line}: " if exc.line is not None else f"{path}: "
        stale = exc if isinstance(exc, errors.StaleError) else None
        return error_response(status, code, f"{where}{exc.message}", path=path, stale=stale,
                              headers={"ETag": f'"{stale.version}"'} if stale else None)
    assert isinstance(exc, OSError)
    log.warning("%s %s: %s", request.method, request.url.path, exc)
    return error_response(status, code, f"{exc.filename or 'the workspace'}: {exc.strerror or exc}; check the "
                                        "path and permissions")


def _field_name(loc: Sequence[Any]) -> str:
    from kbsync.app.guard import field_path

    parts = [str(p) for p in loc[1:]] if loc and loc[0] in ("body", "query", "path", "header") else [str(p) for p in loc]
    return field_path(parts) or str(loc[0] if loc else "body")


def validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    if any(e.get("type") == "json_invalid" for e in exc.errors()):
        return error_response(400, "bad_request", "the body is not valid JSON; send one JSON object")
    problems = [FieldProblem(field=_field_name(e.get("loc", ())), message=str(e.get("msg", "invalid")))
                for e in exc.errors()]
    missing = [p.field for p, e in zip(problems, exc.errors()) if e.get("type") == "missing"]
    summary = f"missing: {', '.join(missing)}" if missing else "; ".join(f"{p.field}: {p.message}" for p in problems)
    return error_response(422, "invalid", f"the request is not valid: {summary}",
                          field=problems[0].field if problems else None, details=problems)


def http_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    code = HTTP_CODES.get(exc.status_code, "error")
    return error_response(exc.status_code, code, str(exc.detail), headers=dict(exc.headers or {}))


def unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("%s %s failed: %r (the traceback follows from the server)", request.method, request.url.path, exc)
    return error_response(500, "internal", f"an unexpected error ({type(exc).__name__}); the server's log has "
                                           "the details")


def install(app: Any) -> None:
    """Answer every error in the API's shape."""
    for cls, _status, _code in STATUS_OF:
        app.add_exception_handler(cls, kbsync_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, unexpected)
