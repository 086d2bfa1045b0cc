"""ladder tables: a ladder table's rotations are found by (ladder_id, table_index), no longer by their shared
seed, since each rotation of a ladder table gets its own deal by default (``ARENA_LADDER_DEALS``)

Revision ID: 0011_ladder_tables
Revises: 0010_refit_deals
Create Date: 2026-12-05 20:00:00.000000
"""

from __future__ import annotations

from alembic import op

revision = '0011_ladder_tables'
down_revision = '0010_refit_deals'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.create_index('ix_matches_ladder_table', ['ladder_id', 'table_index'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.drop_index('ix_matches_ladder_table')
