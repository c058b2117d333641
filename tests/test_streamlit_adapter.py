"""The canary for Streamlit's internals (review_ui/streamlit_adapter.py).

Each name the review UI takes from Streamlit outside its public API is checked
against the Streamlit installed here: the server attributes still exist, the
page names are still in the frontend bundle. A Streamlit release that renames
one fails here, with the name, instead of breaking an editor's page (a key that
does nothing, a claim that lapses under a reader). Nothing else in review_ui/
spells these names: they are in the adapter alone.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import streamlit

from review_ui import streamlit_adapter as adapter
from review_ui.views import queue, shortcuts

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = Path(streamlit.__file__).parent / "static" / "static" / "js"


def missing_server_names(names: tuple[tuple[str, str], ...]) -> list[str]:
    """Every (module, attribute path) that the installed Streamlit lacks."""
    missing = []
    for module_name, path in names:
        try:
            found: object = importlib.import_module(module_name)
        except ImportError:
            missing.append(f"{module_name} (module)")
            continue
        for part in path.split("."):
            found = getattr(found, part, None)
            if found is None:
                missing.append(f"{module_name}.{path}")
                break
    return missing


def bundle_text(folder: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in folder.glob("*.js"))


def missing_frontend_names(patterns: dict[str, str], text: str) -> list[str]:
    return [name for name, pattern in patterns.items() if re.search(pattern, text) is None]


def test_every_server_internal_still_exists():
    assert missing_server_names(adapter.SERVER_NAMES) == []


def test_every_page_name_is_still_in_the_frontend_bundle():
    text = bundle_text(BUNDLE)
    assert text, f"no frontend bundle under {BUNDLE}"
    assert missing_frontend_names(adapter.FRONTEND_NAMES, text) == []


def test_each_page_name_has_its_pattern():
    """A constant added to the adapter without a pattern would never be checked."""
    for name in adapter.FRONTEND_NAMES:
        assert isinstance(getattr(adapter, name), str)
    pattern_of_value = {
        "APP": "stApp",
        "SCRIPT_STATE": "data-test-script-state",
        "NOT_RUNNING": "notRunning",
        "KEY_CLASS": "st-key-",
        "SIDEBAR": "stSidebar",
        "MAIN_BLOCK": "stMainBlockContainer",
        "VERTICAL_BLOCK": "stVerticalBlock",
        "BUTTON": "stButton",
        "FORM_SUBMIT": "stFormSubmitButton",
        "DIALOG": "dialog",
        "DIALOG_CLOSE": "Close",
    }
    assert set(pattern_of_value) == set(adapter.FRONTEND_NAMES)
    for name, word in pattern_of_value.items():
        assert word in getattr(adapter, name) and word in adapter.FRONTEND_NAMES[name]


def test_the_canary_sees_a_rename(tmp_path):
    """The checks fail on a renamed attribute and on a name gone from the bundle."""
    renamed = (("streamlit.runtime", "Runtime.is_active_sessionX"), ("streamlit.nowhere", "x"))
    assert missing_server_names(renamed) == [
        "streamlit.runtime.Runtime.is_active_sessionX",
        "streamlit.nowhere (module)",
    ]
    (tmp_path / "index.js").write_text(
        'var a={"data-testid":`stAppRenamed`,role:`dialog`};', encoding="utf-8"
    )
    text = bundle_text(tmp_path)
    assert missing_frontend_names(
        {"APP": adapter.FRONTEND_NAMES["APP"], "DIALOG": adapter.FRONTEND_NAMES["DIALOG"]}, text
    ) == ["APP"]


def test_our_scripts_carry_the_names_filled_in():
    for script in (shortcuts.keys_script(2.0), shortcuts._REFOCUS_SCRIPT, queue.COMPACT_CSS):
        assert re.search(r"__[A-Z_]+__", script) is None
    keys = shortcuts.keys_script(2.0)
    for name in ("APP", "SCRIPT_STATE", "NOT_RUNNING", "KEY_CLASS", "DIALOG", "DIALOG_CLOSE"):
        assert getattr(adapter, name) in keys


INTERNAL_WORDS = (
    "data-test-script-state",
    "notRunning",
    "st-key-",
    "stSidebar",
    "stMainBlockContainer",
    '[role="dialog"]',
    'aria-label="Close"',
    "is_active_session",
    "get_script_run_ctx",
    '"stApp"',
)


def spelled_outside(root: Path, adapter_path: Path) -> list[str]:
    found = []
    for path in sorted((root / "review_ui").rglob("*.py")):
        if path == adapter_path:
            continue
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(root)}: {w}" for w in INTERNAL_WORDS if w in text]
    return found


def test_only_the_adapter_spells_streamlit_internals(tmp_path):
    assert spelled_outside(ROOT, ROOT / "review_ui" / "streamlit_adapter.py") == []
    page = tmp_path / "review_ui" / "views" / "page.py"
    page.parent.mkdir(parents=True)
    page.write_text("JS = 'document.querySelector(\".st-key-x\")'\n", encoding="utf-8")
    assert spelled_outside(tmp_path, tmp_path / "review_ui" / "streamlit_adapter.py") == [
        "review_ui/views/page.py: st-key-"
    ]
