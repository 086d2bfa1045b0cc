"""A match: its seats and result, and the replay viewer (board at every step, every decision, and the
commitment check the browser recomputes itself); the replay document for download."""

from __future__ import annotations

import gzip

from flask import Response

from arena.services import match_queries, page_queries
from arena.services.errors import NotFound
from arena.services.matches import decompress
from arena.web.pages import pages
from arena.web.pages.common import page, unit_of_work, viewer
from referee.games import GAMES


@pages.get("/matches/<int:match_id>")
def match_page(match_id: int) -> tuple[str, int]:
    with unit_of_work() as session:
        viewer(session)
        match = match_queries.get_match(session, match_id)
        (row,) = page_queries.match_rows(session, [match])
        blob = match.replay_gz
        info = {"seed": match.seed, "params": match.params, "result": match.result, "error": match.error,
                "created_at": match.created_at, "time_limit_ms": match.time_limit_ms}
    replay = None
    if blob:
        doc = decompress(blob)
        replay = {
            "game": doc["game"], "players": doc["players"], "salt": doc["salt"],
            "scheme": doc.get("commitment_scheme", ""), "result": doc["result"],
            "frames": page_queries.replay_frames(doc), "steps": page_queries.replay_steps(doc),
        }
    spec = GAMES[row["game"]].spec if row["game"] in GAMES else None
    return page("match.html", m=row, info=info, spec=spec, replay=replay)


@pages.get("/matches/<int:match_id>/replay.json")
def replay_download(match_id: int) -> Response:
    with unit_of_work() as session:
        blob = match_queries.get_match(session, match_id).replay_gz
    if not blob:
        raise NotFound(f"match {match_id} has no replay yet (it is not finished)")
    return Response(gzip.decompress(blob), mimetype="application/json",
                    headers={"Content-Disposition": f'attachment; filename="match-{match_id}-replay.json"'})
