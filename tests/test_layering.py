"""Dependencies run one way: a package imports only the packages below it.

Layering, lowest first (see BRIEF/ARCHITECTURE):

    guards < store < ingest, summarise < publish < review_ui < copydesk

guards is pure (no other project package); a stage never imports the
application (copydesk) or the UI (review_ui); siblings on one level (ingest and
summarise) do not import each other. Every import counts, also one inside a
function and one by name through `importlib.import_module`.

Every top-level folder holding Python code must have an entry in ALLOWED: a new
package without one fails `test_every_package_has_a_layer` until someone
decides where it sits.

No module in tests/ or bench/ imports a test module (tests/test_*.py): what two
test modules share lives in a helper module (tests/review_app_helpers.py,
tests/cli_helpers.py, ...), so that changing, moving or deleting one test file
cannot break another.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# package -> the project packages it may import. None: anything (tests, benchmarks).
ALLOWED: dict[str, frozenset[str] | None] = {
    "guards": frozenset(),
    "store": frozenset({"guards"}),
    "ingest": frozenset({"guards", "store"}),
    "summarise": frozenset({"guards", "store"}),
    "publish": frozenset({"guards", "store"}),
    "review_ui": frozenset({"guards", "store", "ingest", "summarise", "publish"}),
    "copydesk": frozenset({"guards", "store", "ingest", "summarise", "publish", "review_ui"}),
    # Tooling on top of everything, not installed with the package: anything goes.
    "tests": None,
    "bench": None,
    "docs": None,  # generates the CLI reference from the Typer app
    "evals": None,  # the evaluation pack and its verifier
}
NOT_CODE = frozenset({".venv", ".git", "build", "dist"})
IMPORT_BY_NAME = frozenset({"import_module", "__import__", "find_spec"})


def packages(root: Path) -> list[str]:
    """Top-level folders with Python code in them (at any depth)."""
    return sorted(
        d.name
        for d in root.iterdir()
        if d.is_dir()
        and not d.name.startswith(".")
        and d.name not in NOT_CODE
        and not d.name.endswith(".egg-info")
        and any(d.rglob("*.py"))
    )


def imported_names(source: str) -> Iterator[tuple[int, str]]:
    """(line, dotted module name) of every absolute import in the source."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            first = node.args[0]
            if name in IMPORT_BY_NAME and isinstance(first, ast.Constant):
                if isinstance(first.value, str):
                    yield node.lineno, first.value


def violations(root: Path) -> list[str]:
    """Every import of a project package that the importer's layer does not allow."""
    known = set(packages(root))
    found = []
    for package in sorted(known):
        allowed = ALLOWED.get(package)
        if allowed is None:
            continue
        for path in sorted((root / package).rglob("*.py")):
            for line, name in imported_names(path.read_text(encoding="utf-8")):
                top = name.split(".")[0]
                if top in known and top != package and top not in allowed:
                    where = path.relative_to(root)
                    found.append(f"{where}:{line}: {package} imports {name}")
    return found


def imports_of_test_modules(root: Path) -> list[str]:
    """Every import of a tests/test_* module from tests/ or bench/: absolute,
    relative, `from tests import test_x`, or by name through `import_module`."""
    found = []
    for folder in ("tests", "bench"):
        for path in sorted((root / folder).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            named = list(imported_names(source))
            for node in ast.walk(ast.parse(source)):
                if not isinstance(node, ast.ImportFrom):
                    continue
                if node.level == 1 and node.module and folder == "tests":
                    named.append((node.lineno, f"tests.{node.module}"))
                if node.module == "tests" or (node.level == 1 and not node.module):
                    named += [(node.lineno, f"tests.{alias.name}") for alias in node.names]
            for line, name in sorted(named):
                parts = name.split(".")
                if parts[0] == "tests" and len(parts) > 1 and parts[1].startswith("test_"):
                    found.append(f"{path.relative_to(root)}:{line}: imports {name}")
    return found


def test_every_package_has_a_layer():
    missing = [p for p in packages(ROOT) if p not in ALLOWED]
    assert not missing, f"add these packages to ALLOWED in {__file__}: {missing}"


def test_no_package_imports_a_package_above_it():
    assert violations(ROOT) == []


def test_no_module_imports_a_test_module():
    """What two test modules share lives in a helper module (not named test_*)."""
    assert imports_of_test_modules(ROOT) == []


def test_every_layered_package_is_installed():
    """A package the layering knows but pyproject does not install would work in
    the repository and be missing from a wheel."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    layered = [p for p in packages(ROOT) if ALLOWED.get(p) is not None]
    assert [p for p in layered if f"{p}*" not in include] == []


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_check_sees_every_kind_of_upward_import(tmp_path):
    root = _tree(
        tmp_path,
        {
            "guards/__init__.py": "",
            "guards/a.py": "def f():\n    from store import models\n",
            "store/__init__.py": "import copydesk.config as c\n",
            "ingest/__init__.py": "from summarise.base import Article\n",
            "summarise/x.py": "import importlib\nimportlib.import_module('review_ui.app')\n",
            "publish/p.py": "from store.models import Item\nfrom . import q\n",
            "copydesk/__init__.py": "import review_ui, guards, os\n",
            "review_ui/__init__.py": "",
        },
    )
    assert violations(root) == [
        "guards/a.py:2: guards imports store",
        "ingest/__init__.py:1: ingest imports summarise.base",
        "store/__init__.py:1: store imports copydesk.config",
        "summarise/x.py:2: summarise imports review_ui.app",
    ]


def test_a_new_package_needs_an_entry(tmp_path):
    _tree(tmp_path, {"evals2/run.py": "import copydesk\n"})
    assert "evals2" in packages(tmp_path)
    assert "evals2" not in ALLOWED


def test_the_check_sees_every_kind_of_import_of_a_test_module(tmp_path):
    root = _tree(
        tmp_path,
        {
            "tests/__init__.py": "",
            "tests/helpers.py": "import json\nfrom tests.articles import rss\n",
            "tests/test_a.py": (
                "from tests.test_b import helper\n"
                "from tests.helpers import shared\n"
                "def f():\n    import tests.test_c\n"
            ),
            "tests/test_b.py": "from .test_a import x\nfrom . import test_c, helpers\n",
            "tests/test_c.py": (
                "import importlib\nfrom tests import test_a\n"
                "importlib.import_module('tests.test_b')\n"
            ),
            "tests/golden.py": "from tests.test_a import snapshot\n",
            "bench/b.py": "from tests.test_c import data\nfrom tests.helpers import y\n",
        },
    )
    assert imports_of_test_modules(root) == [
        "tests/golden.py:1: imports tests.test_a",
        "tests/test_a.py:1: imports tests.test_b",
        "tests/test_a.py:4: imports tests.test_c",
        "tests/test_b.py:1: imports tests.test_a",
        "tests/test_b.py:2: imports tests.test_c",
        "tests/test_c.py:2: imports tests.test_a",
        "tests/test_c.py:3: imports tests.test_b",
        "bench/b.py:1: imports tests.test_c",
    ]
