"""The one error hierarchy. Every message says what went wrong and what to do."""

from __future__ import annotations

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2
EXIT_ENVIRONMENT = 3  # a remote, or this machine (a file system, a program, a server kbsync needs)
EXIT_INTERNAL = 70  # kbsync itself failed (a bug): sysexits' EX_SOFTWARE
EXIT_INTERRUPTED = 130


class KbsyncError(Exception):
    """Base of every error kbsync reports to a person; `exit_code` is the CLI's."""

    exit_code = EXIT_PROBLEMS

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line}: " if self.line is not None else f"{self.path}: "
        return f"{where}{self.message}"


class UsageError(KbsyncError):
    """Bad arguments or bad input given on the command line."""

    exit_code = EXIT_USAGE


class ConfigError(KbsyncError):
    """A configuration file or key is wrong; the message names the key and file."""

    exit_code = EXIT_USAGE


class InputError(KbsyncError):
    """A file or payload kbsync was asked to read cannot be accepted."""

    exit_code = EXIT_USAGE


class NotFoundError(InputError):
    """What the input names (a session, a board entry, a candidate) does not exist."""


class ProtocolError(KbsyncError):
    """A workspace file breaks the protocol in a way kbsync will not guess about."""


class LockedError(KbsyncError):
    """A file's lock is held by another writer."""


class ConflictError(KbsyncError):
    """A file changed under a writer; a conflict copy was saved for a person."""

    def __init__(self, message: str, *, path: str | None = None, copy: str | None = None) -> None:
        super().__init__(message, path=path)
        self.copy = copy


class StaleError(KbsyncError):
    """An update was based on a version of a thing that has changed since: nothing was written.

    `current` is the thing as it is now (a board entry's fields, a section's or a fact's text), `version` its
    version, and `changed` the fields in which it differs from what the caller sent.
    """

    def __init__(self, message: str, *, path: str | None = None, version: str = "", current: object = None,
                 changed: tuple[str, ...] = ()) -> None:
        super().__init__(message, path=path)
        self.version = version
        self.current = current
        self.changed = changed


class GitError(KbsyncError):
    """A git operation failed; nothing was lost, the operation can be retried."""

    exit_code = EXIT_ENVIRONMENT


class RemoteError(KbsyncError):
    """A remote (git or the GitHub API) failed after retries; safe to run again."""

    exit_code = EXIT_ENVIRONMENT


class UnavailableError(KbsyncError):
    """Something kbsync needs on this machine is not running or cannot be reached (e.g. the local server)."""

    exit_code = EXIT_ENVIRONMENT


class TimedOutError(KbsyncError):
    """A program, request or job outlived its time bound and was stopped; nothing was lost, safe to retry."""

    exit_code = EXIT_ENVIRONMENT


class SecretFoundError(KbsyncError):
    """The secret scan found something that must not leave the machine."""


class NothingFoundError(NotFoundError):
    """A lookup found nothing (a fact, a conflict): exit 1, as a search without hits."""

    exit_code = EXIT_PROBLEMS
