"""The refit gives the ratings each match's deal (tournament or ladder + seed), kept in the outcome store's
blocks (migration 0010 included), stores the provisional mark, and the leaderboard's JSON carries it, on
SQLite and PostgreSQL."""

from __future__ import annotations

import random
import re

from sqlalchemy import func, select, update

from arena.services import outcome_store
from arena.services.accounts import hash_token
from arena.services.leaderboards import board_log, leaderboard, match_log, refit
from arena.services.matches import record
from arena.storage.db import Database
from arena.storage.models import (
    Account,
    BoardOutcome,
    BoardOutcomeBlock,
    Bot,
    Ladder,
    LeaderboardFit,
    Match,
    MatchSeat,
    Rating,
    Tournament,
)
from tests.arena.test_leaderboards_scale import board_module, statements

GAME, PLAYERS = "pajarracos", 3


def _world(db: Database) -> list[int]:
    with db.session() as session:
        session.add(Account(id=1, name="owner", token_hash=hash_token("arena_test_owner")))
        session.flush()
        session.add(Tournament(id=1, game=GAME, seats=PLAYERS, time_limit_ms=1000, seed=7, created_by=1))
        session.add(Ladder(id=1, game=GAME, players=PLAYERS, time_limit_ms=1000))
        for bot in range(1, 7):
            session.add(Bot(id=bot, owner_id=1, name=f"bot{bot}", url="http://127.0.0.1:9", game=GAME,
                            secret="s" * 16))
    return list(range(1, 7))


def _play(db: Database, table: list[int], ranks: list[int], *, tournament: int | None = None,
          ladder: int | None = None, seed: int = 1) -> int:
    with db.session() as session:
        match = Match(game=GAME, num_players=len(table), seed=seed, params={}, time_limit_ms=1000, status="running",
                      attempts=1, worker="test", tournament_id=tournament, ladder_id=ladder)
        session.add(match)
        session.flush()
        for seat, bot in enumerate(table):
            session.add(MatchSeat(match_id=match.id, seat=seat, bot_id=bot))
        match_id = match.id
    steps = [{"turn": 1, "decisions": [{"seat": s, "latency_ms": 1.0} for s in range(len(table))]}]
    result = {"ranks": ranks, "scores": [float(len(ranks) - r) for r in ranks], "game_ranks": ranks, "forfeited": []}
    assert record(db, match_id, {"game": GAME, "steps": steps, "faults": [], "result": result})
    return match_id


def test_the_rotations_of_a_deal_reach_the_fit_as_one_unit(database) -> None:
    """Three rotations of a tournament deal (seed 5), two of a ladder deal with the same seed, and two
    matches outside both: the refit's log groups exactly the rotations of each deal, and the seat rows'
    log (``match_log``) groups them the same way."""
    bots = _world(database)
    tournament = [_play(database, bots[:3][s:] + bots[:3][:s], [1, 2, 3], tournament=1, seed=5) for s in range(3)]
    ladder = [_play(database, bots[3:][s:] + bots[3:][:s], [1, 2, 3], ladder=1, seed=5) for s in range(2)]
    alone = [_play(database, bots[::2], [2, 1, 3], seed=5), _play(database, bots[1::2], [3, 2, 1], seed=5)]
    log, ids, *_ = board_log(database, GAME, PLAYERS)
    by_id = dict(zip(ids.tolist(), log.deals.tolist(), strict=True))
    assert len({by_id[m] for m in tournament}) == 1 and len({by_id[m] for m in ladder}) == 1
    assert len({by_id[m] for m in tournament + ladder + alone}) == 4
    with database.session(readonly=True) as session:
        outcomes, _ = match_log(session, GAME, PLAYERS)
    deals = [m.deal for m in outcomes]  # the same partition from the matches table
    assert len(set(zip(deals, log.deals.tolist(), strict=True))) == len(set(log.deals.tolist())) == 4
    assert deals.count(("tournament", 1, 5)) == 3 and deals.count(("ladder", 1, 5)) == 2 and deals.count(None) == 2


def test_the_refit_stores_the_provisional_mark_and_the_leaderboard_shows_it(database) -> None:
    """Six bots, forty matches among the first five, then one match for the sixth: the newcomer's interval
    is wide, so it is provisional in the stored row and in the JSON, which also counts the provisional bots
    and says whether the board has settled."""
    bots = _world(database)
    rng = random.Random(3)
    for _ in range(40):
        table = rng.sample(bots[:5], PLAYERS)
        order = sorted(table, key=lambda bot: rng.expovariate(1.0 + bot))
        _play(database, table, [order.index(bot) + 1 for bot in table], seed=rng.randrange(1, 10**9))
    _play(database, [6, 1, 2], [1, 2, 3])
    refit(database, GAME, PLAYERS)
    with database.session(readonly=True) as session:
        stored = {r.bot_id: r for r in session.scalars(select(Rating).where(Rating.game == GAME))}
        board = leaderboard(session, GAME, PLAYERS)
    assert stored[6].provisional and stored[6].elo_high - stored[6].elo_low > 300
    entries = {entry["bot_id"]: entry for entry in board["entries"]}
    assert entries[6]["provisional"] is True
    assert all(entry["provisional"] == stored[bot].provisional for bot, entry in entries.items())
    assert board["provisional_count"] == sum(r.provisional for r in stored.values()) >= 1
    assert board["settled"] is False and board["provisional_rule"] == {"max_interval_elo": 300.0}


def _partition(labels: list[object]) -> set[frozenset[int]]:
    groups: dict[object, set[int]] = {}
    for index, label in enumerate(labels):
        groups.setdefault(label, set()).add(index)
    return {frozenset(group) for group in groups.values()}


def _deal_world(database: Database) -> None:
    bots = _world(database)
    for s in range(3):
        _play(database, bots[:3][s:] + bots[:3][:s], [1, 2, 3], tournament=1, seed=5)
        _play(database, bots[3:][s:] + bots[3:][:s], [3, 2, 1], ladder=1, seed=9)
    _play(database, bots[::2], [2, 1, 3], seed=5)


def test_the_blocks_keep_the_deals_so_a_refit_reads_no_match_rows(database, monkeypatch) -> None:
    """Compacted into blocks, the matches keep their deals: the refit's deals (from the blocks, and from the
    matches table for the single rows still waiting) group as the matches table does, and the refit's only
    read of the matches table is the count (its single rows are read joined to their matches)."""
    monkeypatch.setattr(outcome_store, "BLOCK", 4)
    monkeypatch.setattr(outcome_store, "COMPACT_AT", 3)
    _deal_world(database)
    refit(database, GAME, PLAYERS)  # packs the seven matches into blocks
    _play(database, [1, 2, 3], [1, 2, 3], tournament=1, seed=5)  # a fourth rotation, in a single row
    with database.session(readonly=True) as session:
        assert session.scalar(select(func.count()).select_from(BoardOutcomeBlock)) == 2
        assert session.scalar(select(func.count()).select_from(BoardOutcome)) == 1
    with statements(database) as seen:
        log, *_ = board_log(database, GAME, PLAYERS)
    with database.session(readonly=True) as session:
        outcomes, _ = match_log(session, GAME, PLAYERS)
    assert _partition(log.deals.tolist()) == _partition([m.deal or ("own", i) for i, m in enumerate(outcomes)])
    assert len(set(log.deals.tolist())) == 3
    from_matches = [sql for sql, _ in seen if re.search(r"\bFROM matches\b", sql)]
    assert len(from_matches) == 1 and "count(" in from_matches[0], from_matches


def test_blocks_stored_without_deals_are_rebuilt_with_them(database, monkeypatch) -> None:
    """A block written before the store kept deals (or by an older worker) makes the refit rebuild the store
    from the matches table, deals included, and the table is the same."""
    monkeypatch.setattr(outcome_store, "COMPACT_AT", 3)
    _deal_world(database)
    refit(database, GAME, PLAYERS)
    before = {r.bot_id: (r.elo, r.elo_low, r.elo_high) for r in _ratings(database)}
    with database.session() as session:
        kept = session.scalars(select(BoardOutcomeBlock.deals)).all()
        session.execute(update(BoardOutcomeBlock).values(deals=None))
    refit(database, GAME, PLAYERS)
    with database.session(readonly=True) as session:
        assert session.scalars(select(BoardOutcomeBlock.deals)).all() == kept
    after = {r.bot_id: (r.elo, r.elo_low, r.elo_high) for r in _ratings(database)}
    assert after.keys() == before.keys()
    assert all(abs(x - y) < 1e-6 for bot in before for x, y in zip(before[bot], after[bot], strict=True))


def test_the_migration_gives_stored_blocks_their_deals(database, monkeypatch) -> None:
    """Revision 0010_refit_deals on a store of blocks without deals (as revision 0009 left them): each block
    gets its matches' deals from the matches table, the same bytes a refit writes; stored fits get no spread
    (the next refit searches it from scratch and stores it)."""
    from alembic import command

    from arena.storage.db import alembic_config

    monkeypatch.setattr(outcome_store, "COMPACT_AT", 3)
    monkeypatch.setattr(board_module, "EXACT_MAX_BOTS", 4)  # the large path, which keeps the spreads
    _deal_world(database)
    refit(database, GAME, PLAYERS)
    with database.session(readonly=True) as session:
        kept = session.scalars(select(BoardOutcomeBlock.deals)).all()
        assert session.scalar(select(LeaderboardFit.spread)) is not None
    assert kept and all(kept)
    config = alembic_config(database.url)
    for target in ("0009_ladder_tick", "head"):
        with database.engine.begin() as connection:
            config.attributes["connection"] = connection
            (command.downgrade if target != "head" else command.upgrade)(config, target)
    database.engine.dispose()
    with database.session(readonly=True) as session:
        assert session.scalars(select(BoardOutcomeBlock.deals)).all() == kept
        assert session.execute(select(LeaderboardFit.design_spread, LeaderboardFit.spread)).all() == [(None, None)]
    refit(database, GAME, PLAYERS)


def _ratings(database: Database) -> list[Rating]:
    with database.session(readonly=True) as session:
        return list(session.scalars(select(Rating).where(Rating.game == GAME)))


def test_regression_a_board_a_ladder_plays_is_offered_and_opened_before_its_first_fit(tmp_path) -> None:
    """Regression (a user's trial, twenty-first session): the Korean edition's ladder plays 3 players, but before
    its first fit its leaderboard opened on an empty 2-player board whose only choice was 2."""
    from arena.storage.models import Ladder

    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    db.migrate()
    try:
        with db.session() as session:
            session.add(Ladder(game="piranha-pedro-ko", players=3, time_limit_ms=1000))
        with db.session(readonly=True) as session:
            board = leaderboard(session, "piranha-pedro-ko")
            assert board["players"] == 3 and board["available_players"] == [3] and board["entries"] == []
            assert leaderboard(session, "piranha-pedro-ko", 2)["available_players"] == [3]  # 2: still reachable
            assert leaderboard(session, "pajarracos")["available_players"] == []  # no ladder, no fit: as before
    finally:
        db.dispose()
