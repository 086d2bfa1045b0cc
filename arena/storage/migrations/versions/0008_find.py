"""find: the rating chart's live Elo after every rated match (``live_points``) and the fitted points'
95% interval and match count (``rating_points``); indexes for newest-first keyset paging of a
tournament's, a ladder's and a leaderboard's matches; the tournaments' cross-tables summed again with
shared places as draws (stored pairs of one-loser games left shared places out: two Piranha Pedro bots
that tied six times showed 0-0-0)

Revision ID: 0008_find
Revises: 0007
Create Date: 2026-12-01 23:50:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0008_find'
down_revision = '0007'
branch_labels = None
depends_on = None

INDEXES = (
    ('ix_matches_tournament_id', ['tournament_id', 'id']),
    ('ix_matches_ladder_id', ['ladder_id', 'id']),
    ('ix_matches_board_id', ['game', 'num_players', 'id']),
    ('ix_matches_status_id', ['status', 'id']),
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
    op.create_table('live_points',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('bot_id', sa.Integer(), nullable=False),
    sa.Column('game', sa.String(length=60), nullable=False),
    sa.Column('players', sa.Integer(), nullable=False),
    sa.Column('games', sa.Integer(), nullable=False),
    sa.Column('match_id', sa.Integer(), nullable=False),
    sa.Column('elo', sa.Float(), nullable=False),
    sa.ForeignKeyConstraint(['bot_id'], ['bots.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_live_points_bot', 'live_points', ['bot_id', 'game', 'players', 'games'], unique=False)
    op.add_column('rating_points', sa.Column('elo_low', sa.Float(), nullable=True))
    op.add_column('rating_points', sa.Column('elo_high', sa.Float(), nullable=True))
    op.add_column('rating_points', sa.Column('games', sa.Integer(), nullable=True))
    for name, columns in INDEXES:
        op.create_index(name, 'matches', columns, unique=False)
    op.execute("DELETE FROM tournament_pairs")
    op.execute(_PAIRS)


def downgrade() -> None:
    op.execute("DELETE FROM tournament_pairs")
    op.execute(_OLD_PAIRS)
    for name, _columns in reversed(INDEXES):
        op.drop_index(name, table_name='matches')
    for column in ('games', 'elo_high', 'elo_low'):  # in place (SQLite >= 3.35: unindexed columns)
        op.execute(f'ALTER TABLE rating_points DROP COLUMN {column}')
    op.drop_index('ix_live_points_bot', table_name='live_points')
    op.drop_table('live_points')
