"""The server-rendered pages: one module a page, each exporting `router` (its routes, none in the OpenAPI
document) and `LABELS` (its words in English and Chinese). Every page calls kbsync.app, as the API does, so
what a page shows is read from the Markdown and the derived index and cannot drift from them.

Shared: `render` (templates, language, the page response), `markdown` (safe Markdown to HTML), `forms`
(form bodies and the CSRF field). PAGES below is the one list of page modules (one line a page).

Part of the web door: its modules import kbsync.app, the root floor and kbsync.web, nothing else of the
package (Jinja2 and markdown-it are imported only by the server, never at start-up)."""

from __future__ import annotations

from kbsync.web.pages import (
    board,
    candidates,
    conflicts,
    memory,
    sessions,
    stats,
    status,
)

PAGES = (
    board,
    candidates,
    conflicts,
    memory,
    sessions,
    stats,
    status,
)
