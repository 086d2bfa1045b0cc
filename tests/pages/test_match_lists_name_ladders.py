"""Where a match was played, in words a user reads: a ladder by its game and table size (never its
internal number), linked to the ladder's page; and a bot's page that lists each of its matches once."""

from __future__ import annotations

import re

from arena.storage.models import Ladder, LiveRating, Match, MatchSeat, MatchStatus, Tournament, utcnow
from tests.arena.owner_fakes import ladder_matches, owner_with_bot


def _ladder(context, game: str = "piranha-pedro", players: int = 3) -> int:  # type: ignore[no-untyped-def]
    with context.db.session() as session:
        ladder = Ladder(game=game, players=players, time_limit_ms=1000)
        session.add(ladder)
        session.flush()
        return ladder.id


def _tournament_match(context, owner_id: int, bot_id: int) -> int:  # type: ignore[no-untyped-def]
    with context.db.session() as session:
        tournament = Tournament(created_by=owner_id, game="piranha-pedro", seats=3, time_limit_ms=1000, seed=1,
                                status="finished")
        session.add(tournament)
        session.flush()
        match = Match(tournament_id=tournament.id, game="piranha-pedro", num_players=3, seed=99, time_limit_ms=1000,
                      status=MatchStatus.FINISHED, finished_at=utcnow())
        session.add(match)
        session.flush()
        session.add(MatchSeat(match_id=match.id, seat=0, bot_id=bot_id, rank=1, faults=0, forfeited=False))
        return match.id


def test_regression_a_ladder_bots_page_listed_every_match_twice(client, context) -> None:
    """"Recent matches" and "Recent ladder matches" listed the same matches for a bot that plays only the
    ladder. One list now, each match once, saying where it was played, and a link to the bot's matches on
    each ladder it plays; a bot that also played a tournament reads as well."""
    owner_id, bot_id = owner_with_bot(context.db)
    ladder_id = _ladder(context)
    on_ladder = ladder_matches(context.db, bot_id, [False] * 3, ladder_id=ladder_id)
    in_tournament = _tournament_match(context, owner_id, bot_id)
    with context.db.session() as session:  # its matches published: it is on the 3-player board
        session.add(LiveRating(game="piranha-pedro", players=3, bot_id=bot_id, elo=1500.0, games=4))
    page = client.get(f"/bots/{bot_id}").get_data(as_text=True)
    for match_id in [*on_ladder, in_tournament]:
        assert page.count(f'href="/matches/{match_id}"') == 1, match_id
    assert "Recent ladder matches" not in page
    assert page.count(f'<a href="/ladders/{ladder_id}">Piranha Pedro ladder, 3 players</a>') == 3
    assert re.search(r'<a href="/tournaments/\d+">tournament #\d+</a>', page)
    narrowed = f'href="/matches?bot={bot_id}&amp;ladder={ladder_id}">its matches on the Piranha Pedro ladder, 3 players'
    assert narrowed in page
    assert f'href="/matches?bot={bot_id}">Every match of pedro</a>' in page


def test_regression_match_lists_named_a_ladder_by_its_internal_number(client, context) -> None:
    """The match lists said "ladder #2", linked to a filter: now the ladder's name, linked to its page,
    and a list filtered to one ladder names it in its heading and its filter (a choice of ladders by name,
    not a number field)."""
    _owner_id, bot_id = owner_with_bot(context.db)
    ladder_id = _ladder(context)
    ladder_matches(context.db, bot_id, [False], ladder_id=ladder_id)
    for url in ("/matches", f"/matches?ladder={ladder_id}"):
        page = client.get(url).get_data(as_text=True)
        assert f'<a href="/ladders/{ladder_id}">Piranha Pedro ladder, 3 players</a>' in page, url
        assert not re.search(r"ladder #\d", page), url
    own_page = client.get(f"/ladders/{ladder_id}").get_data(as_text=True)  # its list names no ladder in each row
    assert 'href="/matches/' in own_page and "Played in" not in own_page and not re.search(r"ladder #\d", own_page)
    listed = client.get(f"/matches?ladder={ladder_id}").get_data(as_text=True)
    assert re.search(r"<h1>Matches on the <a [^>]*>Piranha Pedro ladder, 3 players</a></h1>", listed)
    assert f'<option value="{ladder_id}" selected>Piranha Pedro ladder, 3 players</option>' in listed  # the filter
