"""Shared pieces for the `copydesk check` tests (tests/test_cli_check.py and
tests/test_cli_check_model.py): an invented article with its URL, a faithful
draft of it, the source and draft written as files, and a gates-only config.
"""

from __future__ import annotations

from pathlib import Path

# Invented article (Port Elsmere, the harbour authority and everyone in it do not exist).
ARTICLE = "\n\n".join(
    [
        (
            "The harbour authority in Port Elsmere said on Tuesday that 4,080 households had "
            "signed up for its new flood-warning text service in the first month, well ahead "
            "of the 2,500 it had forecast when the scheme was approved in the spring."
        ),
        (
            "Harbourmaster Ines Kalloway told a meeting of the town council that the take-up "
            'was "better than any of us dared hope" and that the authority would now extend '
            "the service to the villages along the estuary. The messages warn residents when "
            "tide gauges at the outer mole predict water above the quay walls, usually six to"
            " eight hours ahead."
        ),
        (
            "The service cost 38,000 pounds to set up, paid from the authority's reserves, "
            "and will cost about 9,500 pounds a year to run. Councillor Tobias Renwick, who "
            "chairs the finance committee, said the money had been well spent after last "
            "winter, when 112 homes on Ferry Lane were flooded in a single night. He asked "
            "the authority to publish how many warnings were sent and how many proved "
            "accurate."
        ),
        (
            "Ms Kalloway said a first report would be ready in March. Residents who have not "
            "yet joined can sign up at the harbour office on Quay Street or through the "
            "authority's website, she added, and the service will remain free of charge."
        ),
    ]
)

URL = "https://news.example.org/port-elsmere-flood-alerts"

GOOD = (
    "Port Elsmere flood alerts draw 4,080 households\n\n"
    "The harbour authority says 4,080 households joined its flood-warning text service in its "
    "first month, against a forecast of 2,500. Harbourmaster Ines Kalloway called the take-up "
    '"better than any of us dared hope".'
)


def write_config(path: Path, modes: dict[str, str] | None = None, min_words: int = 150) -> Path:
    """A config with a [gates] table only: min_source_words and the given modes."""
    lines = ["[gates]", f"min_source_words = {min_words}", "[gates.modes]"]
    lines += [f'{gate} = "{mode}"' for gate, mode in (modes or {}).items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def pair(tmp_path: Path, draft: str, source: str = ARTICLE) -> tuple[str, str]:
    """The source and the draft written to files in tmp_path: their paths."""
    src = tmp_path / "source.txt"
    dft = tmp_path / "draft.txt"
    src.write_text(source, encoding="utf-8")
    dft.write_text(draft, encoding="utf-8")
    return str(src), str(dft)
