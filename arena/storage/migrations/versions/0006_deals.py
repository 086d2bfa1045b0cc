"""deals: an index to find the matches of one deal (a tournament's matches sharing a seed) and their
status, read each time a match is recorded to decide whether its deal can be published; a tournament's
choice of duplicate or independent deals (existing tournaments were duplicate)

Revision ID: 0006
Revises: 0005_sessions
Create Date: 2026-12-01 15:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0006'
down_revision = '0005_sessions'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.create_index('ix_matches_deal', ['tournament_id', 'seed', 'status'], unique=False)
    with op.batch_alter_table('tournaments', schema=None) as batch_op:
        batch_op.add_column(sa.Column('deals', sa.String(length=20), server_default='duplicate', nullable=False))


def downgrade() -> None:
    op.execute('ALTER TABLE tournaments DROP COLUMN deals')  # in place (SQLite >= 3.35): no table rebuild
    with op.batch_alter_table('matches', schema=None) as batch_op:
        batch_op.drop_index('ix_matches_deal')
