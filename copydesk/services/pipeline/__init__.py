"""The pipeline: walks every item through ingest -> source gates -> summarise ->
draft gates -> store, and accounts for every entry it sees. One module per
stage hand-off:

- intake.py: feeds polled, entries born as items (or counted as duplicates);
- source.py: a `Job` becomes the article's text (page fetch, extraction,
  source gates, duplicate look-ups);
- draft.py: the article becomes a draft (summary, draft gates, model checks),
  an `Outcome`;
- writer.py: the committing writer, the only place outcomes become rows;
- run.py: the run loop (`Pipeline`), its row, the thread pools, the stop when
  the model cannot work;
- handoff.py: `Job` and `Outcome`, and how an outcome's ending is set;
  state.py: what the stages of one run share; duplicates.py: `find_duplicate`.
"""

from copydesk.services.pipeline.duplicates import find_duplicate
from copydesk.services.pipeline.handoff import BackendFailure, Job, Outcome, compose_source
from copydesk.services.pipeline.run import Pipeline

__all__ = [
    "BackendFailure",
    "Job",
    "Outcome",
    "Pipeline",
    "compose_source",
    "find_duplicate",
]
