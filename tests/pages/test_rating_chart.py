"""The bot page's rating chart: one point per rated match, the fitted rating with its 95% band, readable
with 1, 10 and 10,000 matches (bucketed past ``MAX_POINTS``), axis labels on both axes."""

from __future__ import annotations

import re
from itertools import pairwise

from sqlalchemy import func, insert, select

from arena.services import rating_history
from arena.storage.history_models import LivePoint, RatingPoint
from arena.storage.models import LiveRating, Rating
from arena.web.pages.charts import nice_ticks, rating_chart


def _board(matches: int, fits: int) -> dict:
    live = [(n, 1500 + 3 * n % 50, 1500 + 3 * n % 50, 1500 + 3 * n % 50) for n in range(1, matches + 1)]
    fitted = [(max(1, matches * (k + 1) // fits), 1500.0 + k, 1450.0 + k, 1550.0 + k) for k in range(fits)]
    return {"game": "pajarracos", "players": 3, "matches": matches, "live": live, "fits": fitted, "bucket": 1}


def test_a_bot_with_9_games_showed_one_point_and_drew_nothing() -> None:
    """Regression: one point per refit (not per match); a single point drew no line and no dot."""
    chart = rating_chart(_board(9, 1))
    assert len(chart["live_dots"]) == 9 and chart["live_line"].count(",") == 9
    assert len(chart["bars"]) == 1 and len(chart["fit_dots"]) == 1  # one fit: its interval as a bar


def test_one_match_draws_one_dot_in_the_middle_with_its_interval() -> None:
    chart = rating_chart(_board(1, 1))
    assert len(chart["live_dots"]) == 1 and chart["live_line"] == ""
    x = chart["live_dots"][0][0]
    assert abs(x - (chart["left"] + chart["right"]) / 2) < 1
    assert chart["bars"] and chart["x_ticks"] == [(1, round(x, 1))]


def test_ten_matches_draw_ten_points_and_a_band_through_the_fits() -> None:
    chart = rating_chart(_board(10, 4))
    assert len(chart["live_dots"]) == 10 and chart["band"] and chart["fit_line"]
    assert chart["x_ticks"][0][0] >= 1 and chart["x_ticks"][-1][0] <= 10


def test_nice_ticks_are_round_and_cover_the_range() -> None:
    assert nice_ticks(1, 10000) == [2000, 4000, 6000, 8000, 10000]
    assert nice_ticks(1, 10) == [2.0, 4.0, 6.0, 8.0, 10.0]
    assert nice_ticks(1432.5, 1611.2) == [1450, 1500, 1550, 1600]


def test_ten_thousand_matches_are_read_in_buckets_from_the_database(database) -> None:
    """10,000 rated matches: at most ``MAX_POINTS`` buckets come back (summed by the database), the chart
    shades each bucket's lowest to highest and its x axis reaches the last match."""
    from arena.services.accounts import create_account
    from arena.storage.models import Bot

    with database.session() as session:
        owner, _ = create_account(session, "owner")
        bot = Bot(owner_id=owner.id, name="many", url="http://127.0.0.1:1", game="pajarracos", secret="s")
        session.add(bot)
        session.flush()
        n = 10_000
        session.execute(insert(LivePoint), [{"bot_id": bot.id, "game": "pajarracos", "players": 3, "games": g,
                                             "match_id": g, "elo": 1500.0 + (g % 97)} for g in range(1, n + 1)])
        session.execute(insert(RatingPoint), [{"bot_id": bot.id, "game": "pajarracos", "players": 3, "match_id": g,
                                               "elo": 1550.0, "live_elo": 1550.0, "elo_low": 1540.0,
                                               "elo_high": 1560.0, "games": g} for g in range(5, n + 1, 5)])
        session.add(LiveRating(game="pajarracos", players=3, bot_id=bot.id, elo=1520.0, games=n))
        session.add(Rating(game="pajarracos", players=3, bot_id=bot.id, elo=1550.0, elo_low=1540.0, elo_high=1560.0,
                           rank=1, rank_low=1, rank_high=1, games=n))
        bot_id = bot.id
    with database.session(readonly=True) as session:
        (board,) = rating_history.history(session, bot_id)
    assert board["matches"] == 10_000 and len(board["live"]) <= rating_history.MAX_POINTS
    assert board["live"][-1][0] == 10_000 and board["bucket"] == 34
    assert len(board["fits"]) <= rating_history.MAX_FITS + 1 and board["fits"][-1][0] == 10_000
    chart = rating_chart(board)
    assert chart["live_range"] and not chart["live_dots"] and chart["band"]
    assert chart["x_ticks"][-1][0] == 10_000


def test_the_bot_page_draws_one_point_per_rated_match_and_the_band(client, context, world) -> None:
    with context.db.session(readonly=True) as session:
        games = dict(session.execute(select(LiveRating.bot_id, LiveRating.games)
                                     .where(LiveRating.game == "pajarracos", LiveRating.players == 3)).all())
        points = session.scalar(select(func.count()).select_from(LivePoint))
    assert points == sum(games.values()) + 4  # and 2 seats x 2 Piranha Pedro matches
    for name in ("rnd1", "faulty"):
        page = client.get(f"/bots/{world.bots[name]}").get_data(as_text=True)
        assert page.count('class="live-dot"') == games[world.bots[name]] > 1
        assert re.search(r'class="(band|bar)"', page)
        assert "rated matches on this leaderboard" in page and ">Elo</text>" in page
        headline = re.search(r'id="headline-rating">.*?class="value">(\d+)<', page, re.S)
        assert headline, "one headline rating"
        assert "Live Elo</th>" not in page


def test_regression_a_bot_refitted_after_every_match_had_fits_drawn_only_at_the_right_edge(database) -> None:
    """A ladder bot at the maintenance rate gets a refit, so a fitted point, after every match. Only the
    newest 2,000 fitted points were read: over 10,000 matches the fitted line and band covered the last
    2,000, about 60 points at the right edge of the chart. The fits drawn span the whole history."""
    from arena.services.accounts import create_account
    from arena.storage.models import Bot

    n = 10_000
    with database.session() as session:
        owner, _ = create_account(session, "owner")
        bot = Bot(owner_id=owner.id, name="steady", url="http://127.0.0.1:1", game="pajarracos", secret="s")
        session.add(bot)
        session.flush()
        session.execute(insert(RatingPoint), [{"bot_id": bot.id, "game": "pajarracos", "players": 3, "match_id": g,
                                               "elo": 1500.0 + g / 100, "live_elo": 1550.0, "elo_low": 1440.0,
                                               "elo_high": 1660.0, "games": g} for g in range(1, n + 1)])
        session.add(LiveRating(game="pajarracos", players=3, bot_id=bot.id, elo=1520.0, games=n))
        bot_id = bot.id
    with database.session(readonly=True) as session:
        (board,) = rating_history.history(session, bot_id)
    xs = [x for x, _elo, _low, _high in board["fits"]]
    width = -(-n // rating_history.MAX_FITS)
    assert rating_history.MAX_FITS - 1 <= len(xs) <= rating_history.MAX_FITS
    assert xs[0] <= width and xs[-1] == n
    assert max(b - a for a, b in pairwise(xs)) <= width  # evenly over the whole history
    assert all(elo == 1500.0 + x / 100 for x, elo, _low, _high in board["fits"])  # each bucket's own last fit
