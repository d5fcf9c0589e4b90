"""One session as the web board shows it: the frontmatter as rows, the sections, the sessions it was split
from and into; its images, read only inside the workspace and through no symlink; its HTML export."""

from __future__ import annotations

import mimetypes
import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from kbsync.app.flagview import FlagNote, notes
from kbsync.errors import InputError, KbsyncError, NotFoundError

if TYPE_CHECKING:
    from kbsync.store.workspace import Workspace

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"})
MAX_IMAGE_BYTES = 10 * 1024 * 1024


@dataclass(frozen=True)
class Link:
    id: str
    title: str
    found: bool  # False: the frontmatter names a session this workspace does not hold


@dataclass(frozen=True)
class SessionDetail:
    id: str
    path: str
    title: str
    rows: list[tuple[str, str]]  # the frontmatter as written, each value made readable
    preamble: str  # Markdown before the first section
    sections: list[tuple[str, str]]  # (heading, Markdown)
    parent: Link | None
    children: list[Link]  # sessions whose `parent` is this one: in the order this one lists them, then oldest first
    flags: list[FlagNote]  # embedded instructions in the file, each with its line and excerpt
    ts: str = ""  # when the session started, as its frontmatter gives it


@dataclass(frozen=True)
class Image:
    path: str
    data: bytes
    media_type: str


@dataclass(frozen=True)
class ExportedPage:
    filename: str
    html: str


def session_detail(ws: Workspace, sid: str) -> SessionDetail:
    """Session `sid` with its frontmatter rows, sections, parent and children (NotFoundError, ProtocolError)."""
    from kbsync.app.guard import learned
    from kbsync.app.sessions import read_session
    from kbsync.retrieval.listing import children
    from kbsync.store.export import frontmatter_rows

    view = read_session(ws, sid)
    text = ws.read_text(view.path)
    rows = frontmatter_rows(text)[0]
    parent = view.frontmatter.get("parent")
    found = [Link(str(r.fields.get("id") or ""), r.title, True) for r in children(ws, sid)]
    kids = sorted(found, key=lambda k: text.find(k.id) % (len(text) + 1))  # as the split listed them, then oldest
    return SessionDetail(sid, view.path, _title(view.frontmatter, sid), rows, view.preamble, view.sections,
                         _link(ws, str(parent)) if parent else None, kids, notes({"": text}, learned(ws)),
                         str(view.frontmatter.get("ts") or ""))


def _title(fields: dict[str, object], sid: str) -> str:
    return str(fields.get("title") or fields.get("summary") or sid)


def _link(ws: Workspace, sid: str) -> Link:
    from kbsync.app.sessions import read_session

    try:
        return Link(sid, _title(read_session(ws, sid).frontmatter, sid), True)
    except KbsyncError:
        return Link(sid, sid, False)


def image_path(document: str, src: str) -> str | None:
    """The workspace path a relative image link of `document` names; None for any other link (a URL, an
    absolute path, a fragment) and for one that climbs out of the workspace."""
    parts = urlsplit(src)
    if not src or parts.scheme or parts.netloc or src.startswith(("/", "#", "\\")) or not parts.path:
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(document), unquote(parts.path)))
    return None if joined == ".." or joined.startswith(("../", "/")) else joined


def workspace_image(ws: Workspace, relpath: str) -> Image:
    """An image file of the workspace: a raster type by its name, no bigger than 10 MB, inside the workspace
    (not .git/ or .kbsync/), reached through no symlink; InputError saying why not, NotFoundError if absent."""
    from kbsync.core import pathrules
    from kbsync.store import fsio, pathgate

    why = pathrules.refusal(relpath) or pathgate.disk_refusal(ws.root, relpath)
    media = mimetypes.guess_type(relpath)[0] or ""
    if why:
        raise InputError(f"not served: the path {why}", path=relpath)
    if media not in IMAGE_TYPES:
        raise InputError(f"not served: {media or 'an unknown type'} is not one of the image types shown "
                         "(PNG, JPEG, GIF, WebP, AVIF, BMP)", path=relpath)
    try:
        if ws.path(relpath).lstat().st_size > MAX_IMAGE_BYTES:
            raise InputError("not served: the file is over the 10 MB limit", path=relpath)
        data = fsio.read_regular(ws.path(relpath))[0]
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise NotFoundError("no such image in the workspace", path=relpath) from exc
    except fsio.UnreadableError as exc:
        raise InputError(exc.message, path=relpath) from None
    return Image(relpath, data, media)


def export_page(ws: Workspace, sid: str) -> ExportedPage:
    """Session `sid` as the self-contained HTML page `kbsync export --to html --images inline` writes."""
    from kbsync.store.export import render_file
    from kbsync.store.sessions import find_by_id

    relpath = find_by_id(ws, sid)
    page, _ = render_file(ws.checked_path(relpath), relpath, "inline")
    return ExportedPage(posixpath.basename(relpath)[:-3] + ".html", page)
