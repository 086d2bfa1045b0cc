"""A match: its seats and result, and the replay viewer (board at every step, every decision, and the
commitment check the browser recomputes itself); the replay document for download."""

from __future__ import annotations

import json

from flask import Response

from arena.services import page_queries
from arena.services.errors import NotFound, require_id
from arena.services.redaction import public_replay
from arena.web.context import unit_of_work
from arena.web.pages import pages
from arena.web.pages.common import page, viewer
from arena.web.pages.replay_data import replay_frames, replay_steps, replay_views
from referee.games import GAMES


@pages.get("/matches/<int:match_id>")
def match_page(match_id: int) -> tuple[str, int]:
    require_id(match_id, "match")
    with unit_of_work() as session:
        viewer(session)
        rows = page_queries.match_rows(session, [match_id])
        if not rows:
            raise NotFound(f"no match {match_id}")
        info = page_queries.match_details(session, match_id)
    row, doc = rows[0], info.pop("replay")
    replay = None
    if doc:
        views = replay_views(doc)
        replay = {
            "game": doc["game"], "players": doc["players"], "salt": doc["salt"],
            "scheme": doc.get("commitment_scheme", ""), "result": doc["result"],
            "frames": replay_frames(doc, views), "steps": replay_steps(doc, views),
        }
    spec = GAMES[row["game"]].spec if row["game"] in GAMES else None
    return page("match.html", m=row, info=info, spec=spec, replay=replay)


@pages.get("/matches/<int:match_id>/replay.json")
def replay_download(match_id: int) -> Response:
    require_id(match_id, "match")
    with unit_of_work() as session:
        doc = page_queries.match_details(session, match_id)["replay"]
    if not doc:
        raise NotFound(f"match {match_id} has no public replay yet: it is not finished, or another match of its deal "
                       "is still being played")
    body = json.dumps(public_replay(doc), separators=(",", ":"))
    return Response(body, mimetype="application/json",
                    headers={"Content-Disposition": f'attachment; filename="match-{match_id}-replay.json"'})
