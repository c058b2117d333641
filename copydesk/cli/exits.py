"""Every exit code of every command, in one place: `--help` ends with a command's
codes (its epilog, set by `document`), README's command table lists them, and
tests/test_docs.py checks both against this table.

The meanings are the same for every command: 0 the command did its job (discards
are part of the job), 1 it ran and found something that needs a person, 2 bad
usage, 3 it could not work (configuration, database, model key), with a one-line
reason on stderr. Light on purpose: `--help` imports it.
"""

from __future__ import annotations

from typing import Any

EXIT_OK = 0
EXIT_FAILED = 1  # the command ran and found something that needs a person (e.g. a hard gate)
EXIT_USAGE = 2
EXIT_UNABLE = 3  # the command could not do its job: bad config, database unreachable

USAGE = "bad usage (an unknown option, a missing or malformed argument)"
UNABLE = "could not work: bad configuration; the database unreachable or behind (copydesk migrate)"

# Command path -> what 0 and 1 mean for it, and what else can make it exit 3;
# every command can also exit 2 and 3 (`codes`).
SPECIFIC: dict[str, dict[int, str]] = {
    "init": {0: "the schema is up to date (created if new; the runtime role's rights granted)"},
    "migrate": {0: "the same as init"},
    "run": {
        0: "the run did its job, discards included (SQLite: or another run was in progress)",
        1: "with --publish: a delivery is pending or was refused",
        3: "the summariser cannot start (backend anthropic without ANTHROPIC_API_KEY, a "
        "model key refused), no publish targets with --publish",
    },
    "recheck": {0: "the checks that could be asked again were", 3: "no model to ask"},
    "demo": {
        0: "the demo ran (and the review queue was stopped)",
        3: "the port is taken, or the review server stopped by itself",
    },
    "feeds add": {0: "the feed was added, or was known already (said so; nothing changed)"},
    "feeds list": {
        0: "listed",
        1: "with --check: a feed is failing, stale or cut by its size cap",
    },
    "feeds remove": {
        0: "removed",
        1: "no such feed, it is declared in config.toml, or items came from it (disable it)",
    },
    "feeds disable": {0: "disabled", 1: "no such feed, or it is declared in config.toml"},
    "feeds enable": {0: "enabled", 1: "no such feed, or it is declared in config.toml"},
    "feeds rename": {
        0: "renamed",
        1: "no such feed, it is declared in config.toml, or the name is taken",
    },
    "submit": {0: "the article went through the pipeline (its status says how)"},
    "extract": {0: "extracted", 1: "the page could not be fetched, or is not HTML"},
    "check": {
        0: "every hard gate passed",
        1: "a hard gate failed (--jsonl: on some line, or a line was malformed)",
        3: "--model without a model key",
    },
    "eval": {
        0: "every metric met its floor",
        1: "a metric fell short of its floor, or a stored run to compare is missing",
    },
    "audit": {
        0: "shown, or the chain verified",
        1: "no such item; with --verify: the chain is broken or the anchor does not hold",
    },
    "discards": {0: "listed"},
    "unchecked": {0: "listed"},
    "stats": {0: "shown"},
    "editor add": {0: "added"},
    "editor password": {0: "changed"},
    "editor list": {0: "listed"},
    "editor disable": {0: "disabled"},
    "review": {
        0: "the server was stopped (Ctrl-C or SIGTERM)",
        3: "the port is taken, or the server (Streamlit) stopped by itself",
    },
    "publish": {
        0: "everything went out",
        1: "a delivery is still pending, failed, held in its Undo window, or blocked by a gate",
        3: "no publish targets, or a webhook secret missing",
    },
    "retract": {
        0: "retracted, and every target that had it told",
        1: "the item is not published, or a target has not been told yet (the next "
        "publish tells it)",
    },
    "watch": {
        0: "no published summary lost its grounding",
        1: "an item was flagged, or a source could not be re-read",
    },
    "replay": {0: "no outcome would flip", 1: "some would flip"},
    "models": {0: "shown (offline: nothing is sent)"},
    "doctor": {
        0: "all well",
        1: 'a check failed (backend "anthropic" without ANTHROPIC_API_KEY, which `run` '
        "refuses with 3; a model refusing its temperature)",
        3: "a check could not run (--live without ANTHROPIC_API_KEY; no database, after "
        "the other findings)",
    },
}


def codes(command: str) -> dict[int, str]:
    """Every exit code of `command` ("feeds add") with its meaning."""
    found = dict(SPECIFIC[command])
    found[EXIT_USAGE] = USAGE
    found[EXIT_UNABLE] = UNABLE + (f"; {found[EXIT_UNABLE]}" if EXIT_UNABLE in found else "")
    return dict(sorted(found.items()))


def epilog(command: str) -> str:
    return "Exit codes: " + "; ".join(f"{c} {why}" for c, why in codes(command).items()) + "."


def document(app: Any, prefix: str = "") -> None:
    """Give every command of the Typer `app` (and of its groups) its exit codes as
    the epilog of its --help. A command missing from SPECIFIC gets none here, and
    tests/test_docs_commands.py fails naming it: no command ships without its codes."""
    for info in app.registered_commands:
        name = f"{prefix}{info.name or info.callback.__name__}"
        if name in SPECIFIC:
            info.epilog = epilog(name)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            document(group.typer_instance, f"{prefix}{group.name} ")
