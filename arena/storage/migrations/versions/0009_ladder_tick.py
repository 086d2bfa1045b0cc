"""ladder tick: an index on matches (ladder_id, created_at), so the scheduler's tick counts the last
hour's ladder matches (the per-hour budgets) from the index instead of scanning every stored match

Revision ID: 0009_ladder_tick
Revises: 0008_find
Create Date: 2026-12-02 03:00:00.000000
"""

from __future__ import annotations

from alembic import op

revision = '0009_ladder_tick'
down_revision = '0008_find'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index('ix_matches_ladder_created', 'matches', ['ladder_id', 'created_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_matches_ladder_created', table_name='matches')
