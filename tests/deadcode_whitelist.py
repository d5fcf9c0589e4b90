"""What the dead-code gate (vulture, run by scripts/test over daemon/, bench/ and tests/) cannot see used.

Each name here is used, but by something vulture does not read: a template, a job table that names a
function as a string, a framework that calls an override, a dict that a TypedDict describes. A new name
goes here only with the reason beside it; anything else vulture reports is dead and is deleted.
Routes, MCP tools and pytest fixtures are left out by their decorators ([tool.vulture] in pyproject.toml).
This file is read by vulture, never run."""

from typing import Any

_: Any = None

# Called by name: service/jobs.py's job table ("module:function" strings)
_.scheduled_commit  # git/commit.py
_.scheduled_scan  # board/scan.py
_.sources_configured  # board/scan.py
_.scheduled  # retrieval/semanticclient.py

# Read by the web pages' Jinja templates
_.guide  # app/boardview.py, board.html
_.search_problem  # app/boardview.py, board.html
_.base_commit  # app/insights.py and web/boardmodels.py, review.html

# Keys of TypedDicts and fields of pydantic models: read as JSON, by key
_.last_event  # results.py StatusReport, status.html
_.last_repair  # results.py StatusReport, status.html
_.next_offset  # mcp/results.py Page
_.role  # mcp/schemas.py, web/models.py
_.mine_text  # web/models.py ConflictShown
_.theirs_text  # web/models.py ConflictShown
_.model_config  # pydantic's settings of a model

# Set by name from a configuration file or counted into a report
_.share_references  # config.py ContextConfig: the [context] table's key
_.unchanged  # board/sources.py Counts
_.pending_count  # store/daemonstatus.py DaemonStatus, written as JSON (as_dict)

# Overrides and attributes that a library calls or reads
_.tb  # __exit__'s third argument (progress.py, store/workspace.py)
_.on_any_event  # watchdog's FileSystemEventHandler (service/watch.py)
_.ConnectionCls  # urllib3's connection pools (sync/transports/wallclock.py)
_.pool_classes_by_scheme  # urllib3's PoolManager (sync/transports/wallclock.py)
_.validateLink  # markdown-it's link check (web/pages/markdown.py)
_.should_exit  # uvicorn's Server (web/server.py, tests/helpers/mcp.py)
_.handle_starttag  # html.parser's HTMLParser (tests/helpers/export.py)
_.daemon_threads  # socketserver's ThreadingMixIn (tests/helpers/ghserver.py)
_.protocol_version  # http.server's BaseHTTPRequestHandler (tests/helpers/ghserver.py)
_.log_message  # http.server's BaseHTTPRequestHandler
_.close_connection  # http.server's BaseHTTPRequestHandler
_.do_GET  # http.server's BaseHTTPRequestHandler
_.do_POST
_.do_PATCH
_.do_PUT
_.note_thread  # a pydantic field_validator (tests/web/test_routing.py)

# The fake GitHub API's handlers, found by "<method>_<route>" (tests/helpers/ghserver.py Api.dispatch)
_.get_matching_refs
_.patch_refs
_.post_refs
_.post_blobs
_.get_blobs
_.post_trees
_.get_trees
_.post_commits
_.get_commits
_.put_contents
_.get_compare

# Read by pytest
_.pytestmark  # a module's marks
