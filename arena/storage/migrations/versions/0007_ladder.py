"""ladder: continuous rated ladders per leaderboard (``ladders``), ladder matches (``matches.ladder_id``,
with an index to find a ladder deal's matches), bot versions, capacity and pauses (owner or probation),
a bot's event log (``bot_events``), and whether a fitted rating is still provisional

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 23:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('ladders',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('game', sa.String(length=60), nullable=False),
    sa.Column('players', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('paused_reason', sa.Text(), nullable=True),
    sa.Column('time_limit_ms', sa.Integer(), nullable=False),
    sa.Column('params', sa.JSON(), nullable=False),
    sa.Column('settings', sa.JSON(), nullable=False),
    sa.Column('tables', sa.Integer(), nullable=False),
    sa.Column('settled_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_scheduled_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('game', 'players', name='uq_ladder_board')
    )
    op.create_table('bot_events',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('bot_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=30), nullable=False),
    sa.Column('detail', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['bot_id'], ['bots.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_bot_events_bot', 'bot_events', ['bot_id', 'id'], unique=False)
    # Plain ADD COLUMN (no table rebuild on SQLite, whose rebuild the foreign keys into bots and matches
    # forbid once they hold rows).
    op.add_column('bots', sa.Column('lineage_id', sa.Integer(), nullable=True))
    op.add_column('bots', sa.Column('version', sa.Integer(), server_default='1', nullable=False))
    op.add_column('bots', sa.Column('retired_at', sa.DateTime(timezone=True), nullable=True))
    op.add_column('bots', sa.Column('capacity', sa.Integer(), server_default='1', nullable=False))
    op.add_column('bots', sa.Column('paused_by', sa.String(length=20), nullable=True))
    op.add_column('bots', sa.Column('paused_reason', sa.Text(), nullable=True))
    op.add_column('bots', sa.Column('recheck_at', sa.DateTime(timezone=True), nullable=True))
    op.add_column('bots', sa.Column('strikes', sa.Integer(), server_default='0', nullable=False))
    op.create_index('ix_bots_lineage_id', 'bots', ['lineage_id'], unique=False)
    op.add_column('matches', sa.Column('ladder_id', sa.Integer(), nullable=True))
    op.create_index('ix_matches_ladder_deal', 'matches', ['ladder_id', 'seed', 'status'], unique=False)
    op.add_column('ratings', sa.Column('provisional', sa.Boolean(), server_default=sa.true(), nullable=False))


def downgrade() -> None:
    # In place (SQLite >= 3.35 drops an unindexed column without a table rebuild)
    op.execute('ALTER TABLE ratings DROP COLUMN provisional')
    op.drop_index('ix_matches_ladder_deal', table_name='matches')
    op.execute('ALTER TABLE matches DROP COLUMN ladder_id')
    op.drop_index('ix_bots_lineage_id', table_name='bots')
    for column in ('strikes', 'recheck_at', 'paused_reason', 'paused_by', 'capacity', 'retired_at',
                   'version', 'lineage_id'):
        op.execute(f'ALTER TABLE bots DROP COLUMN {column}')
    op.drop_index('ix_bot_events_bot', table_name='bot_events')
    op.drop_table('bot_events')
    op.drop_table('ladders')
