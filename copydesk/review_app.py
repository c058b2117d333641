"""The Streamlit entry script that `copydesk review` runs.

It reads the settings the way every command does ($COPYDESK_CONFIG or
./config.toml, then $COPYDESK_DATABASE_URL and the other overrides) and hands
the review UI the part it needs: the UI itself never reads config.toml.
"""

from __future__ import annotations

from copydesk.config import ConfigError, load_settings, own_anchor
from review_ui.app import cannot_start, main

try:
    settings = load_settings()
except ConfigError as exc:
    cannot_start(exc)
else:
    own_anchor(settings)  # its decisions advance this database's anchor (issue 22)
    main(settings.for_review())
