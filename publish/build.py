"""A `Publisher` for the configured targets: one recipe for every caller (the
`copydesk publish` command through copydesk/services/compose.py, and the review
queue's Publish now through review_ui/desk/publishing.py)."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy.engine import Engine

from guards.settings import GateSettings
from publish.service import GateConfig, Publisher
from publish.settings import PublishSettings
from publish.targets import build_targets


def configured_publisher(
    engine: Engine,
    publish: PublishSettings,
    gates: GateSettings,
    *,
    actor: str,
    env: Mapping[str, str],
    hold_seconds: float = 0,
) -> Publisher:
    """Deliver as `actor` to `[[publish.targets]]`, re-checking the hard gates of
    `[gates]`. Raises ValueError when a target's secret is missing from `env`.
    `hold_seconds`: the queue's Undo window ([review] undo_seconds); an approval
    that young waits for a later publish. Call `close()` on it when done."""
    return Publisher(
        engine,
        build_targets(publish.targets, env),
        actor=actor,
        gates=GateConfig(gates.all_modes(), gates.min_source_words),
        lease_seconds=publish.lease_seconds,
        hold_seconds=hold_seconds,
        retry_seconds=publish.retry_seconds,
        retry_max_seconds=publish.retry_max_seconds,
        id_authority=publish.id_authority,
    )
