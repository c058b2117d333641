"""Dependencies that cannot change under us (issue 23).

- Every third-party module the project imports is declared in pyproject.toml: the
  application's packages in `dependencies` (or an optional extra), tests, bench and
  docs also in the `test` extra. A module that arrives only as someone else's
  dependency can vanish or change with their next release.
- requirements.lock (`make lock`) pins a version of every declared distribution,
  inside pyproject's range, and this environment (`make setup`) is exactly it.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
import tomllib
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
LOCK = ROOT / "requirements.lock"
APPLICATION = ("copydesk", "ingest", "summarise", "guards", "review_ui", "store", "publish")
OTHERS = ("tests", "bench", "docs", "evals", "deploy")
OWN = set(APPLICATION + OTHERS)
PIN = re.compile(
    r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^ ;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$"
)


def _requirements(*groups: str) -> list[Requirement]:
    project = PYPROJECT["project"]
    found = [Requirement(r) for r in project["dependencies"]]
    for group in groups:
        found += [Requirement(r) for r in project["optional-dependencies"][group]]
    return found


def _declared(*groups: str) -> set[str]:
    return {canonicalize_name(r.name) for r in _requirements(*groups)}


def _imports(folder: str) -> dict[str, set[str]]:
    """Top-level third-party modules imported under `folder`: {module: {file}}."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / folder).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top in sys.stdlib_module_names or top in OWN or top == "__future__":
                    continue
                found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def _undeclared(folders: tuple[str, ...], allowed: set[str]) -> list[str]:
    providers = md.packages_distributions()
    problems = []
    for folder in folders:
        for module, files in sorted(_imports(folder).items()):
            dists = {canonicalize_name(d) for d in providers.get(module, [])}
            if not dists:
                problems.append(f"{module} (in {sorted(files)[0]}): not installed, not declared")
            elif not dists & allowed:
                problems.append(f"{module} (in {sorted(files)[0]}): from {sorted(dists)}")
    return problems


def test_every_import_of_the_application_is_declared() -> None:
    allowed = _declared(*PYPROJECT["project"]["optional-dependencies"].keys() - {"test"})
    assert _undeclared(APPLICATION, allowed) == []


def test_every_import_of_tests_bench_and_docs_is_declared() -> None:
    allowed = _declared(*PYPROJECT["project"]["optional-dependencies"])
    assert _undeclared(OTHERS, allowed) == []


def test_the_scan_sees_an_undeclared_import(tmp_path: Path, monkeypatch) -> None:
    """The check above can fail: a module imported but not declared is named."""
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "x.py").write_text("import rich\nfrom numbers import Number\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert _undeclared(("store",), {"sqlmodel"}) == ["rich (in store/x.py): from ['rich']"]


def _lock() -> dict[str, tuple[str, str | None]]:
    """{distribution: (version, marker)} from requirements.lock."""
    pins: dict[str, tuple[str, str | None]] = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        match = PIN.match(line)
        if match:
            pins[canonicalize_name(match[1])] = (match[2], match[3])
    return pins


def test_the_lock_pins_every_declared_distribution_inside_its_range() -> None:
    pins = _lock()
    for requirement in _requirements("test"):
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is declared but not in requirements.lock"
        version = pins[name][0]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"requirements.lock pins {requirement.name}=={version}, outside {requirement}"
        )


def test_this_environment_is_the_locked_one() -> None:
    """What `make setup` installed is what the lock says (a stale lock or venv fails)."""
    environment = default_environment()
    wrong = []
    for name, (version, marker) in _lock().items():
        if marker and not Requirement(f"x; {marker}").marker.evaluate(environment):  # type: ignore[union-attr]
            continue
        try:
            installed = md.version(name)
        except md.PackageNotFoundError:
            installed = None
        if installed != version:
            wrong.append(f"{name}: locked {version}, installed {installed}")
    assert wrong == []
