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

Inside the two top packages (INNER):

    copydesk: cli > services, render, evaluation > config, logs
    review_ui: app, views > desk; streamlit_adapter alone knows Streamlit's internals

The command line (copydesk/cli) uses the services and the renderers; a service
never imports the command line or a renderer; a renderer reads (services' read
models) and writes nothing. review_ui/desk imports no Streamlit and no view, so
it is unit-testable; only review_ui/streamlit_adapter.py imports Streamlit's
internals (`streamlit.runtime`, `streamlit.web`, ...). And no module of the
project imports itself back through others: no import circles.
"""

from __future__ import annotations

import ast
import importlib.util
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


# --------------------------------------------------------------------------- inside a package

# importer (a module or a package, by dotted prefix) -> the project modules it may
# not import, by dotted prefix. The longest matching importer prefix decides.
INNER: dict[str, tuple[str, ...]] = {
    "copydesk.services": ("copydesk.cli", "copydesk.render", "copydesk.evaluation"),
    "copydesk.evaluation": ("copydesk.cli", "copydesk.render", "copydesk.services"),
    # A renderer reads: the read models of copydesk/services/audit.py and reports.py,
    # never a service that writes (the pipeline, re-checks, watch, replay...).
    "copydesk.render": (
        "copydesk.cli",
        "copydesk.evaluation",
        "copydesk.services.compose",
        "copydesk.services.heartbeat",
        "copydesk.services.pipeline",
        "copydesk.services.recheck",
        "copydesk.services.replay",
        "copydesk.services.watch",
    ),
    "copydesk.config": ("copydesk.cli", "copydesk.services", "copydesk.render"),
    "copydesk.logs": ("copydesk.cli", "copydesk.services", "copydesk.render"),
    "review_ui.desk": (
        "streamlit",
        "review_ui.views",
        "review_ui.app",
        "review_ui.streamlit_adapter",
    ),
    "review_ui.settings": ("streamlit", "review_ui.views", "review_ui.desk"),
}
STREAMLIT_ADAPTER = "review_ui.streamlit_adapter"


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules(root: Path) -> dict[str, Path]:
    """Every module of the layered packages (not tests, bench, docs, evals)."""
    found = {}
    for package in packages(root):
        if ALLOWED.get(package) is None:
            continue
        for path in sorted((root / package).rglob("*.py")):
            found[module_name(root, path)] = path
    return found


def _is_module(name: str) -> bool:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    return spec is not None


def imports_of(root: Path, path: Path, modules: dict[str, Path]) -> Iterator[tuple[int, str]]:
    """(line, module) for every import in the file, a `from a import b` naming the
    module a.b when b is a module (of the project, or of Streamlit: `from streamlit
    import runtime` is streamlit.runtime), else a."""
    source = path.read_text(encoding="utf-8")
    here = module_name(root, path).split(".")
    if path.name != "__init__.py":
        here = here[:-1]  # the package a relative import starts from
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(here[: len(here) - node.level + 1] + [node.module or ""]).strip(".")
            else:
                base = node.module or ""
            for alias in node.names:
                whole = f"{base}.{alias.name}"
                streamlit = base.split(".")[0] == "streamlit"
                submodule = whole in modules or (streamlit and _is_module(whole))
                yield node.lineno, whole if submodule else base
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            first = node.args[0]
            if name in IMPORT_BY_NAME and isinstance(first, ast.Constant):
                if isinstance(first.value, str):
                    yield node.lineno, first.value


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def inner_violations(root: Path) -> list[str]:
    """Imports the INNER rules forbid, and Streamlit's internals imported outside
    the adapter."""
    modules = project_modules(root)
    found = []
    for importer, path in modules.items():
        rules = [p for p in INNER if _under(importer, p)]
        forbidden = INNER[max(rules, key=len)] if rules else ()
        for line, name in imports_of(root, path, modules):
            where = f"{path.relative_to(root)}:{line}"
            if any(_under(name, f) for f in forbidden):
                found.append(f"{where}: {importer} imports {name}")
            elif name.startswith("streamlit.") and importer != STREAMLIT_ADAPTER:
                found.append(f"{where}: {importer} imports {name} (only {STREAMLIT_ADAPTER})")
    return found


def import_circles(root: Path) -> list[list[str]]:
    """Every set of project modules that import each other in a loop (strongly
    connected components of the import graph, imports inside functions included),
    each sorted, the list sorted."""
    modules = project_modules(root)
    graph = {
        m: sorted({n for _, n in imports_of(root, p, modules) if n in modules and n != m})
        for m, p in modules.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []

    def visit(node: str) -> None:  # Tarjan
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(circles)


def private_imports(root: Path, package: str) -> list[str]:
    """`from module import _name` in `package`: a private helper of another module."""
    found = []
    for path in sorted((root / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                for alias in node.names:
                    if alias.name.startswith("_"):
                        found.append(f"{path.relative_to(root)}:{node.lineno}: {alias.name}")
    return found


def test_a_command_module_imports_no_private_helper(tmp_path):
    """What two command modules share is public (or lives in copydesk/cli/context.py)."""
    assert private_imports(ROOT, "copydesk/cli") == []
    root = _tree(tmp_path, {"copydesk/cli/ingest.py": "from copydesk.cli.run import _summariser\n"})
    assert private_imports(root, "copydesk/cli") == ["copydesk/cli/ingest.py:1: _summariser"]


def test_inside_each_package_imports_run_one_way():
    assert inner_violations(ROOT) == []


def test_no_import_circles():
    assert import_circles(ROOT) == []


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


def test_the_inner_check_sees_each_rule(tmp_path):
    root = _tree(
        tmp_path,
        {
            "copydesk/__init__.py": "",
            "copydesk/cli/__init__.py": "from copydesk.services import pipeline\n",
            "copydesk/services/__init__.py": "",
            "copydesk/services/pipeline.py": "def f():\n    from copydesk.cli import app\n",
            "copydesk/services/audit.py": "",
            "copydesk/render/__init__.py": "",
            "copydesk/render/audit.py": (
                "from copydesk.services import audit\nfrom copydesk.services import pipeline\n"
            ),
            "review_ui/__init__.py": "",
            "review_ui/streamlit_adapter.py": "from streamlit.runtime import exists\n",
            "review_ui/desk/__init__.py": "",
            "review_ui/desk/a.py": "import streamlit as st\nfrom review_ui.views import page\n",
            "review_ui/views/__init__.py": "",
            "review_ui/views/page.py": "from streamlit.web import server\nimport streamlit\n",
        },
    )
    assert inner_violations(root) == [
        "copydesk/render/audit.py:2: copydesk.render.audit imports copydesk.services.pipeline",
        "copydesk/services/pipeline.py:2: copydesk.services.pipeline imports copydesk.cli",
        "review_ui/desk/a.py:1: review_ui.desk.a imports streamlit",
        "review_ui/desk/a.py:2: review_ui.desk.a imports review_ui.views.page",
        "review_ui/views/page.py:1: review_ui.views.page imports streamlit.web.server"
        " (only review_ui.streamlit_adapter)",
    ]


def test_the_circle_check_finds_circles_through_functions_and_packages(tmp_path):
    root = _tree(
        tmp_path,
        {
            "guards/__init__.py": "",
            "guards/a.py": "from guards import b\n",
            "guards/b.py": "def f():\n    from guards.c import x\n",
            "guards/c.py": "import guards.a\n",
            "guards/d.py": "from . import e\n",
            "guards/e.py": "from .d import y\n",
            "guards/f.py": "from guards import a\n",  # into a circle, not part of it
            "store/__init__.py": "from store import g\n",  # a package and its module
            "store/g.py": "import os\n",
        },
    )
    assert import_circles(root) == [["guards.a", "guards.b", "guards.c"], ["guards.d", "guards.e"]]
