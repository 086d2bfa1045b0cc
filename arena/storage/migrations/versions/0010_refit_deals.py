"""refit deals: each outcome block keeps its matches' deals (tournament, ladder, seed), so a refit stops
reading every row of the matches table; a leaderboard's fit keeps the prior's fitted spread, where the next
refit's search starts. Stored blocks get their deals from the matches table here; stored fits get no
spread (their next refit searches from the stored ratings' spread, as before, and stores it)

Revision ID: 0010_refit_deals
Revises: 0009_ladder_tick
Create Date: 2026-12-02 04:00:00.000000
"""

from __future__ import annotations

import numpy as np
import sqlalchemy as sa
from alembic import op

revision = '0010_refit_deals'
down_revision = '0009_ladder_tick'
branch_labels = None
depends_on = None

_blocks = sa.table('board_outcome_blocks', sa.column('game', sa.String), sa.column('players', sa.Integer),
                   sa.column('last_match_id', sa.Integer), sa.column('match_ids', sa.LargeBinary),
                   sa.column('deals', sa.LargeBinary))
_matches = sa.table('matches', sa.column('id', sa.Integer), sa.column('tournament_id', sa.Integer),
                    sa.column('ladder_id', sa.Integer), sa.column('seed', sa.BigInteger))


def upgrade() -> None:
    with op.batch_alter_table('board_outcome_blocks', schema=None) as batch_op:
        batch_op.add_column(sa.Column('deals', sa.LargeBinary(), nullable=True))
    with op.batch_alter_table('leaderboard_fits', schema=None) as batch_op:
        batch_op.add_column(sa.Column('design_spread', sa.Float(), nullable=True))
        batch_op.add_column(sa.Column('spread', sa.Float(), nullable=True))
    connection = op.get_bind()
    keys = connection.execute(sa.select(_blocks.c.game, _blocks.c.players, _blocks.c.last_match_id)).all()
    for game, players, last_match_id in keys:  # one block (at most 4,096 matches) at a time
        where = ((_blocks.c.game == game) & (_blocks.c.players == players)
                 & (_blocks.c.last_match_id == last_match_id))
        ids = np.frombuffer(bytes(connection.scalar(sa.select(_blocks.c.match_ids).where(where))), dtype='<i4')
        found = {row[0]: row[1:] for row in connection.execute(
            sa.select(_matches.c.id, _matches.c.tournament_id, _matches.c.ladder_id, _matches.c.seed)
            .where(_matches.c.id.in_(ids.tolist())))}
        # outcome_store.pack_deals's layout (copied: a migration must not change with the code); a match
        # that is gone counts as a deal of its own, as it did when the refit read the matches table
        deals = [(-1 if t is None else t, -1 if ladder is None else ladder, seed)
                 for t, ladder, seed in (found.get(i, (None, None, 0)) for i in ids.tolist())]
        packed = np.asarray(deals, dtype='<i8').reshape(-1, 3).tobytes()
        connection.execute(sa.update(_blocks).where(where).values(deals=packed))


def downgrade() -> None:
    with op.batch_alter_table('leaderboard_fits', schema=None) as batch_op:
        batch_op.drop_column('spread')
        batch_op.drop_column('design_spread')
    with op.batch_alter_table('board_outcome_blocks', schema=None) as batch_op:
        batch_op.drop_column('deals')
