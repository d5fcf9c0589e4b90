"""Floor 7, the local HTTP API: one server on 127.0.0.1 (in the daemon, or `kbsync web serve`) whose
requests and responses are Pydantic models, whose OpenAPI document is generated from them, and
whose every endpoint calls the kbsync.app function the command line calls for the same action.

A front door: it imports kbsync.app, the root floor and its own folder, and nothing else of the
package; no other front door imports it (kbsync.main composes them). The ASGI stack (FastAPI,
Starlette, Pydantic, uvicorn) is imported only by the commands that serve, never at start-up:
`command.py` registers `kbsync web` and imports the rest inside its run functions."""
