"""``GET /api/bots/<a>/vs/<b>``: two bots' head-to-head record over every finished match both sat in."""

from __future__ import annotations

from flask import jsonify

from arena.services.errors import require_id
from arena.services.find_matches import head_to_head as record_of
from arena.web.api import api
from arena.web.context import unit_of_work


@api.get("/bots/<int:bot_id>/vs/<int:opponent_id>")
def head_to_head(bot_id: int, opponent_id: int):  # type: ignore[no-untyped-def]
    require_id(bot_id, "bot")
    require_id(opponent_id, "bot")
    with unit_of_work() as session:
        return jsonify(record_of(session, bot_id, opponent_id))
