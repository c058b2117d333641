"""near-duplicate signatures signed again with copydesk's own MinHash

Revision ID: 0011_minhash_own
Revises: 0010_story_order
Create Date: 2026-12-03

store/duplicates.py no longer uses datasketch: it computes its MinHash itself over
hashlib, with a scheme fixed by that file (see its docstring, "The MinHash").
Signatures are only comparable with signatures of the same scheme, so every stored
signature (`items.dup_signature`) and its band buckets (`item_dup_bands`) are
computed again here from the item's stored title and source text; otherwise a
draft stored before this revision would never group with one stored after it
(the same fault datasketch 2.0's new default scheme caused: an identical text
scored 0.0). Items without a signature keep none.

Downgrade changes nothing: the signatures of the earlier scheme cannot be made
without the library, and the ones made here are valid at any revision that has
the columns (the code of the earlier revision just would not match them).
"""

from __future__ import annotations

from alembic import op

revision = "0011_minhash_own"
down_revision = "0010_story_order"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The store's own code: the signature is whatever store/duplicates.py computes now.
    from store import duplicates

    duplicates.sign_again(op.get_bind())


def downgrade() -> None:
    pass
