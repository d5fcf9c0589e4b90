"""`/memory`: the same app functions as `kbsync memory list|get|set|forget`.

A fact is named in a URL by its key, percent-encoded (a `/` in it as %2F); the file it lives in is
memory/facts.md unless `preferences` or `entity` names another, as the command's options do.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query, Response

from kbsync.app import memory
from kbsync.results import Fact, FactChange
from kbsync.web import models as m
from kbsync.web.deps import WS, BasedOn, etag
from kbsync.web.routing import Router

router = Router(tags=["memory"])
Key = Annotated[str, Path(description="the fact's key, e.g. `language` (matched without case or emphasis)",
                          examples=["language"])]
Entity = Annotated[str | None, Query(description="the entity's file, memory/entities/<slug of the name>.md")]
Preferences = Annotated[bool, Query(description="memory/preferences.md")]


@router.get("/memory", response_model=list[Fact],
            summary="every fact of every memory file (with preferences or entity: of that file only)")
def list_facts(ws: WS, entity: Entity = None, preferences: Preferences = False) -> list[Fact]:
    return [f.as_dict() for f in memory.list_facts(ws, preferences=preferences, entity=entity)]


@router.get("/memory/{key:path}", response_model=Fact, summary="one fact")
def get_fact(ws: WS, key: Key, response: Response, entity: Entity = None, preferences: Preferences = False) -> Fact:
    found = memory.get_fact(ws, key, preferences=preferences, entity=entity)
    response.headers.update(etag(found.version))
    return found.as_dict()


@router.put("/memory/{key:path}", response_model=FactChange,
            responses={201: {"model": FactChange, "description": "the fact was added"}},
            summary="set a fact: replaced in place when the key is there (200), else added (201); with If-Match, a "
                    "fact changed or forgotten since is 409 `stale`")
def set_fact(ws: WS, key: Key, body: m.FactSet, base: BasedOn, response: Response) -> FactChange:
    done = memory.set_fact(ws, key, body.value, preferences=body.preferences, entity=body.entity, base=base)
    response.status_code = 201 if done.action == "added" else 200
    return done.as_dict()


@router.delete("/memory/{key:path}", response_model=FactChange, summary="forget a fact (every bullet with its key)")
def forget_fact(ws: WS, key: Key, entity: Entity = None, preferences: Preferences = False) -> FactChange:
    return memory.forget_fact(ws, key, preferences=preferences, entity=entity).as_dict()
