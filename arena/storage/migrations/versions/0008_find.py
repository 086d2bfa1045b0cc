"""find: indexes for newest-first keyset paging of a tournament's and a ladder's matches (and of one
leaderboard's), and the tournaments' cross-tables summed again with shared places as draws (stored pairs
of one-loser games left shared places out: two Piranha Pedro bots that tied six times showed 0-0-0)

Revision ID: 0008_find
Revises: 0007
Create Date: 2026-12-01 23:50:00.000000
"""

from __future__ import annotations

from alembic import op

revision = '0008_find'
down_revision = '0007'
branch_labels = None
depends_on = None

INDEXES = (
    ('ix_matches_tournament_id', ['tournament_id', 'id']),
    ('ix_matches_ladder_id', ['ladder_id', 'id']),
    ('ix_matches_board_id', ['game', 'num_players', 'id']),
)

# Frozen here on purpose (the service's code may change with later schemas): every pair of seats of a
# finished tournament match, the better place wins, a shared place draws.
_PAIRS = """INSERT INTO tournament_pairs (tournament_id, bot_id, other_id, wins, draws, losses)
SELECT m.tournament_id, a.bot_id, b.bot_id,
       sum(CASE WHEN a.rank < b.rank THEN 1 ELSE 0 END),
       sum(CASE WHEN a.rank = b.rank THEN 1 ELSE 0 END),
       sum(CASE WHEN a.rank > b.rank THEN 1 ELSE 0 END)
FROM matches m JOIN match_seats a ON a.match_id = m.id
JOIN match_seats b ON b.match_id = m.id AND b.bot_id <> a.bot_id
WHERE m.tournament_id IS NOT NULL AND m.status = 'finished'
GROUP BY m.tournament_id, a.bot_id, b.bot_id"""

# What revision 0004 summed (one-loser games: only a winner against a non-winner), for the way down.
_ONE_LOSER_GAMES = "m.game IN ('piranha-pedro', 'piranha-pedro-ko')"
_OLD_PAIRS = _PAIRS.replace(
    "sum(CASE WHEN a.rank < b.rank THEN 1 ELSE 0 END)",
    f"sum(CASE WHEN {_ONE_LOSER_GAMES} THEN (CASE WHEN a.rank = 1 AND b.rank <> 1 THEN 1 ELSE 0 END) "
    "ELSE (CASE WHEN a.rank < b.rank THEN 1 ELSE 0 END) END)").replace(
    "sum(CASE WHEN a.rank = b.rank THEN 1 ELSE 0 END)",
    f"sum(CASE WHEN {_ONE_LOSER_GAMES} THEN 0 ELSE (CASE WHEN a.rank = b.rank THEN 1 ELSE 0 END) END)").replace(
    "sum(CASE WHEN a.rank > b.rank THEN 1 ELSE 0 END)",
    f"sum(CASE WHEN {_ONE_LOSER_GAMES} THEN (CASE WHEN a.rank <> 1 AND b.rank = 1 THEN 1 ELSE 0 END) "
    "ELSE (CASE WHEN a.rank > b.rank THEN 1 ELSE 0 END) END)")


def upgrade() -> None:
    for name, columns in INDEXES:
        op.create_index(name, 'matches', columns, unique=False)
    op.execute("DELETE FROM tournament_pairs")
    op.execute(_PAIRS)


def downgrade() -> None:
    op.execute("DELETE FROM tournament_pairs")
    op.execute(_OLD_PAIRS)
    for name, _columns in reversed(INDEXES):
        op.drop_index(name, table_name='matches')
