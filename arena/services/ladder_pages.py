"""What a ladder's page reads: its state and settings (``ladders.ladder_json``) with its latest matches.

Apart from ``ladders`` because the match lists (``find_matches``) read publication, which the ladder
service sits under."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from arena.config import Settings
from arena.services import find_matches
from arena.services.ladders import get_ladder, ladder_json


def ladder_page_data(session: Session, ladder_id: int, settings: Settings, recent: int = 10) -> dict[str, Any]:
    """``ladder_json`` and the ladder's latest matches (``recent_matches``, newest first, results only where
    the deal is over), which the page refreshes live as they are played."""
    ladder = get_ladder(session, ladder_id)
    latest = find_matches.find_matches(session, find_matches.MatchFilter(ladder=ladder.id), limit=recent)
    return ladder_json(session, ladder, settings) | {"recent_matches": latest["matches"]}
