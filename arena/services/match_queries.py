"""Reading matches for pages and the API (writing them is ``arena.services.matches``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, defer, selectinload

from arena.services.errors import NotFound, require_id
from arena.services.find_matches import MatchFilter, find_ids
from arena.services.publication import is_public
from arena.services.redaction import public_replay
from arena.storage.models import Bot, Match
from arena.storage.replays import decompress


def list_matches(session: Session, found: MatchFilter, limit: int = 50) -> list[dict[str, Any]]:
    """Newest first before ``found.before``, narrowed by ``found`` (``find_matches``: the same filters and
    secrecy as the match list page), as JSON without replays: the replay blobs stay unread and the bots'
    names come in one query for the whole page (not one per match)."""
    ids = find_ids(session, found, limit)
    query = (select(Match).options(defer(Match.replay_gz), selectinload(Match.seats))
             .where(Match.id.in_(ids)).order_by(Match.id.desc()))
    matches = list(session.scalars(query)) if ids else []
    ids = {seat.bot_id for match in matches for seat in match.seats}
    names = dict(session.execute(select(Bot.id, Bot.name).where(Bot.id.in_(ids))).all()) if ids else {}
    return [match_json(match, names=names) for match in matches]


def get_match(session: Session, match_id: int) -> Match:
    require_id(match_id, "match")
    match = session.scalar(select(Match).options(selectinload(Match.seats), defer(Match.replay_gz))
                           .where(Match.id == match_id))  # the blob is loaded only when it may be shown
    if match is None:
        raise NotFound(f"no match {match_id}")
    return match


def match_json(match: Match, with_replay: bool = False, names: dict[int, str] | None = None) -> dict[str, Any]:
    session = Session.object_session(match)
    if names is None and session is not None:
        ids = [s.bot_id for s in match.seats]
        names = dict(session.execute(select(Bot.id, Bot.name).where(Bot.id.in_(ids))).all())
    names = names or {}
    public = is_public(match.status)  # a match's deal stays secret until all its matches are over
    data: dict[str, Any] = {
        "id": match.id,
        "tournament": match.tournament_id,
        "ladder": match.ladder_id,
        "kind": "tournament" if match.tournament_id else "ladder" if match.ladder_id else "single",
        "game": match.game,
        "players": match.num_players,
        "seed": match.seed if public else None,
        "status": match.status,
        "result": match.result if public else None,
        "error": match.error,
        "seats": [{"seat": s.seat, "bot_id": s.bot_id, "name": names.get(s.bot_id, f"bot {s.bot_id}"),
                   "rank": s.rank, "score": s.score, "forfeited": s.forfeited, "faults": s.faults}
                  for s in match.seats],
        "created_at": match.created_at.isoformat(),
        "finished_at": match.finished_at.isoformat() if match.finished_at and public else None,
    }
    if with_replay:
        data["replay"] = public_replay(decompress(match.replay_gz)) if public and match.replay_gz else None
    return data
