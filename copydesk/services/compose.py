"""The composition root: the parts a command works with, built from the settings
in one place, each once.

A command gets a `Desk` (settings and an up-to-date store) from
copydesk/cli/context.py and asks it for what it needs: the summariser, the
model checker, a pipeline, a publisher. Nothing here prints or exits; a part
that cannot be built raises (`BackendChoiceError`, `NoPublishTargets`), and the
command says so in one line.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Engine

from copydesk.config import Settings
from store.db import session_scope
from store.models import Run, utcnow

# The parts are imported where they are built: every command that opens the store
# gets a Desk, and most of them build none of these (the pipeline alone brings the
# page extractor and the feed parser: a third of the CPU of `copydesk audit --verify`).
# tests/test_cli_imports.py checks that such a command imports none of them.
if TYPE_CHECKING:
    from copydesk.services.pipeline import Pipeline
    from ingest.fetch import Fetcher
    from publish.service import Publisher
    from summarise.base import Summariser
    from summarise.checks import Checker

EXIT_UNABLE = 3  # the exit status a refused run row records (copydesk/cli/context.py)


class NoPublishTargets(ValueError):
    """No `[[publish.targets]]`, or a target's secret is missing from the environment."""


@dataclass
class Desk:
    settings: Settings
    engine: Engine
    env: dict[str, str] | None = None  # None: os.environ, read when a part is built
    _checker: Checker | None = field(default=None, init=False, repr=False)

    @property
    def environ(self) -> dict[str, str]:
        return dict(os.environ) if self.env is None else self.env

    def summariser(self, *, command: str) -> Summariser:
        """The configured summariser, checked before any item is touched. A refusal
        (no key, a model that refuses temperature 0) raises BackendChoiceError and
        leaves a run row that says why nothing was touched."""
        from summarise.factory import BackendChoiceError, make_summariser

        try:
            return make_summariser(self.settings.summarise, self.environ)
        except BackendChoiceError as exc:
            self._record_refused_run(command, str(exc))
            raise

    def backend_choice(self) -> str:
        """Which summariser `backend = "auto"` resolves to here."""
        from summarise.factory import choose_backend

        return choose_backend(self.settings.summarise, self.environ)

    def checker(self) -> Checker:
        """The model checker `[checks]` asks for (built once per desk)."""
        if self._checker is None:
            from summarise.factory import make_checker

            self._checker = make_checker(self.settings.checks, self.environ)
        return self._checker

    def pipeline(
        self,
        summariser: Summariser,
        fetcher: Fetcher,
        *,
        command: str,
        checker: Checker | None = None,
        progress: Callable[[str, int, int], None] | None = None,
        **options: Any,
    ) -> Pipeline:
        """A pipeline over this desk's store, with this desk's checker unless one is given."""
        from copydesk.services.pipeline import Pipeline

        return Pipeline(
            self.settings,
            self.engine,
            summariser,
            fetcher,
            command=command,
            checker=self.checker() if checker is None else checker,
            progress=progress,
            **options,
        )

    def publisher(self, actor: str) -> Publisher:
        """The configured targets, delivering as `actor`. An approval still inside the
        queue's Undo window ([review] undo_seconds) waits for a later publish."""
        from publish.build import configured_publisher

        publish = self.settings.publish
        if not publish.targets:
            raise NoPublishTargets(
                "no publish targets configured: add [[publish.targets]] to config.toml"
            )
        try:
            return configured_publisher(
                self.engine,
                publish,
                self.settings.gates,
                actor=actor,
                env=self.environ,
                hold_seconds=self.settings.review.undo_seconds,
            )
        except ValueError as exc:
            raise NoPublishTargets(str(exc)) from None

    def _record_refused_run(self, command: str, reason: str) -> None:
        with session_scope(self.engine) as session:
            now = utcnow()
            session.add(
                Run(
                    command=command,
                    backend=self.backend_choice(),
                    started_at=now,
                    ended_at=now,
                    exit_status=EXIT_UNABLE,
                    error=f"summariser refused: {reason}",
                )
            )
