"""web sessions: a signed-in browser's random key, stored as its SHA-256 with the account and an expiry,
so that signing out revokes the cookie (and the cookie no longer carries the account or its token hash)

Revision ID: 0005_sessions
Revises: 0004
Create Date: 2026-12-01 14:50:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0005_sessions'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('web_sessions',
    sa.Column('key_hash', sa.String(length=64), nullable=False),
    sa.Column('account_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['account_id'], ['accounts.id'], ),
    sa.PrimaryKeyConstraint('key_hash')
    )
    op.create_index(op.f('ix_web_sessions_account_id'), 'web_sessions', ['account_id'], unique=False)
    op.create_index(op.f('ix_web_sessions_expires_at'), 'web_sessions', ['expires_at'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_web_sessions_expires_at'), table_name='web_sessions')
    op.drop_index(op.f('ix_web_sessions_account_id'), table_name='web_sessions')
    op.drop_table('web_sessions')
