"""The documentation cannot fall behind the code.

- docs/cli.md, generated from the Typer app by `make docs`, names every command,
  subcommand and option the app has;
- config.toml documents every setting the Settings model accepts (every key of
  every section, nested sections and the `[[feeds]]` table included; a commented-out
  `# key = value` line counts), so a new setting cannot ship undocumented;
- no code comment cites a design document that is not in the repository.
"""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path

from pydantic import BaseModel

from copydesk.config import Settings
from docs import gen_cli
from guards.registry import ALL_GATES
from summarise.pricing import _PRICED

ROOT = Path(__file__).resolve().parents[1]
CLI_MD = ROOT / "docs" / "cli.md"
CONFIG = ROOT / "config.toml"
REGENERATE = "run `make docs` to regenerate docs/cli.md from the Typer app, and commit it"
# Set by load_settings, never read from the file.
NOT_IN_THE_FILE = {"source"}

_HEADER = re.compile(r"^#?\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r'^#?\s*("[^"]+"|[A-Za-z_][\w-]*)\s*=')


# --------------------------------------------------------------------------- the CLI reference


def _sections(text: str) -> dict[str, str]:
    """docs/cli.md split at its command headings: {"copydesk feeds add": section text}."""
    parts = re.split(r"^#{2,4} `([^`]+)`\s*$", text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def test_every_command_and_option_is_in_the_cli_reference():
    documented = _sections(CLI_MD.read_text(encoding="utf-8")) if CLI_MD.exists() else {}
    missing = []
    for path, command in gen_cli.walk(gen_cli.root_command(), ("copydesk",)):
        name = " ".join(path)
        if name not in documented:
            missing.append(name)
            continue
        for param in command.params:
            if getattr(param, "hidden", False) or param.param_type_name != "option":
                continue
            for flag in (*param.opts, *param.secondary_opts):
                if f"`{flag}`" not in documented[name]:
                    missing.append(f"{name} {flag}")
    assert not missing, f"docs/cli.md does not document {missing}: {REGENERATE}"


def test_the_walk_sees_nested_commands_and_their_options():
    """The check above is only as good as the walk: it must reach subcommands."""
    paths = {" ".join(p): c for p, c in gen_cli.walk(gen_cli.root_command(), ("copydesk",))}
    assert {"copydesk", "copydesk run", "copydesk feeds add", "copydesk editor add"} <= set(paths)
    flags = {f for p in paths["copydesk"].params for f in p.opts}
    assert {"--config", "--log-format"} <= flags


def test_an_undocumented_option_is_caught():
    reference = gen_cli.render().replace("`--log-format`", "`--log-style`")
    assert "--log-format" not in _sections(reference)["copydesk"]


# --------------------------------------------------------------------------- config.toml


def _documented_keys(text: str) -> set[tuple[str, str]]:
    """(section, key) for every assignment in config.toml, commented out or not;
    sections as dotted paths without quotes (`summarise.prices.claude-haiku-4-5`)."""
    section = ""
    keys: set[tuple[str, str]] = set()
    for raw in text.splitlines():
        line = raw.strip()
        header = _HEADER.match(line)
        if header:
            section = header.group(2).replace('"', "")
            continue
        key = _KEY.match(line)
        if key:
            keys.add((section, key.group(1).strip('"')))
    return keys


def _model_of(annotation: object) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _tagged_union(annotation: object) -> list[type[BaseModel]]:
    """The models of `Annotated[A | B, Field(discriminator=...)]`, else []."""
    if typing.get_origin(annotation) is not typing.Annotated:
        return []
    members = typing.get_args(typing.get_args(annotation)[0])
    return [m for m in members if _model_of(m) is not None]


def _settings_needed(model: type[BaseModel], section: str) -> list[tuple[str, str]]:
    """(section, key) for every setting of `model`, walking nested models, lists of
    models (`[[feeds]]`) and dict tables (`[gates.modes]`, `[summarise.prices.*]`)."""
    needed: list[tuple[str, str]] = []
    for name, field in model.model_fields.items():
        if not section and name in NOT_IN_THE_FILE:
            continue
        annotation = field.annotation
        origin = typing.get_origin(annotation)
        args = typing.get_args(annotation)
        inner = _model_of(annotation)
        if inner is None and origin is list and args:
            inner = _model_of(args[0])
        here = f"{section}.{name}" if section else name
        kinds = _tagged_union(args[0]) if origin is list and args else []
        if kinds:  # [[publish.targets]]: a list of tables, one model per `kind`
            for kind in kinds:
                needed += [k for k in _settings_needed(kind, here) if k not in needed]
        elif inner is not None:
            needed += _settings_needed(inner, here)
        elif origin is dict:
            needed.append((section, f"[{here}]"))  # a table: its header must be there
        elif origin in (typing.Union, types.UnionType) and any(map(_model_of, args)):
            raise AssertionError(f"{here}: teach this test to walk {annotation}")
        else:
            needed.append((section, name))
    return needed


def test_every_setting_is_documented_in_config_toml():
    text = CONFIG.read_text(encoding="utf-8")
    keys = _documented_keys(text)
    sections = {s for s, _ in keys}
    missing = []
    for section, key in _settings_needed(Settings, ""):
        if key.startswith("["):
            table = key.strip("[]")
            if not any(s == table or s.startswith(table + ".") for s in sections):
                missing.append(key)
        elif (section, key) not in keys:
            missing.append(f"{section}.{key}" if section else key)
    # Dict tables whose keys are known elsewhere: every gate's mode, every price.
    missing += [f"gates.modes.{g}" for g in ALL_GATES if ("gates.modes", g) not in keys]
    price_tables = {s for s in sections if s.startswith("summarise.prices.")}
    for key in sorted(set(_PRICED.values())):
        if not any((table, key) in keys for table in price_tables):
            missing.append(f"summarise.prices.<model>.{key}")
    assert not missing, (
        f"config.toml does not document {missing}: add each setting to config.toml in its "
        "section with a comment saying what it does (a commented-out `# key = default` line "
        "is enough for one that is off by default). config.toml is where settings are "
        "documented; the CLI reference is docs/cli.md (`make docs`)."
    )


def test_the_settings_walk_reaches_nested_tables_and_feeds():
    needed = set(_settings_needed(Settings, ""))
    assert ("database", "url") in needed and ("ingest", "allow_private") in needed
    assert ("feeds", "url") in needed and ("feeds", "enabled") in needed
    assert ("gates", "[gates.modes]") in needed and ("summarise", "[summarise.prices]") in needed
    assert ("", "source") not in needed


def test_an_undocumented_setting_is_caught():
    text = CONFIG.read_text(encoding="utf-8")
    assert ("ingest", "respect_robots") in _documented_keys(text)
    trimmed = "\n".join(line for line in text.splitlines() if not line.startswith("respect_robots"))
    assert ("ingest", "respect_robots") not in _documented_keys(trimmed)
    commented = text.replace("respect_robots = true", "# respect_robots = true")
    assert ("ingest", "respect_robots") in _documented_keys(commented)


# --------------------------------------------------------------------------- design references


def test_code_cites_only_design_documents_in_the_repository():
    cited = []
    for path in ROOT.rglob("*.py"):
        if ".venv" in path.parts or path == Path(__file__).resolve():
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for doc in re.findall(r"\b([A-Z][A-Z_]+\.md)\b", line):
                if not (ROOT / doc).exists():
                    cited.append(f"{path.relative_to(ROOT)}:{n} cites {doc}")
    assert not cited, f"{cited}: cite ARCHITECTURE.md (or add the document to the repository)"
    assert (ROOT / "ARCHITECTURE.md").exists()


def test_help_keeps_the_config_section_names():
    """Rich markup would swallow "[checks]" and "[review]" in option help."""
    from typer.testing import CliRunner

    from copydesk.cli import app

    check = CliRunner().invoke(app, ["check", "--help"])
    review = CliRunner().invoke(app, ["review", "--help"])
    assert check.exit_code == 0 and review.exit_code == 0
    assert "[checks] in config.toml" in " ".join(check.stdout.split())
    assert "(default: [review] port, 8501)" in " ".join(review.stdout.split())


# --------------------------------------------------------------------------- the pages

# The hand-written pages: every link, every repository path and every command named
# in them must exist, so that a move or a rename cannot leave a page pointing nowhere.
PAGES = ("README.md", "ARCHITECTURE.md", "review_ui/README.md", "evals/README.md", "docs")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_CODE = re.compile(r"`([^`\n]+)`")
_PATH = re.compile(r"^\.?[\w.-]+(/[\w.*-]+)*/?$")
_ROOT_DIRS = ("copydesk", "review_ui", "store", "guards", "ingest", "summarise", "publish")
_ROOTS = (*_ROOT_DIRS, "tests", "bench", "docs", "evals", "deploy", ".ci")
_FILES = (".py", ".md", ".toml", ".json", ".ini", ".example", ".service", ".timer", ".lock")


def pages(root: Path) -> list[Path]:
    found = []
    for name in PAGES:
        path = root / name
        found += sorted(path.glob("*.md")) if path.is_dir() else [path] if path.exists() else []
    return found


def _is_repo_path(token: str) -> bool:
    if not _PATH.match(token) or token.startswith(("http", "/")):
        return False
    first = token.split("/")[0]
    return ("/" in token and first in _ROOTS) or (
        "/" not in token and token.endswith(_FILES) and token[:1].isupper()
    )


def _commands(root_command: object) -> dict[str, set[str]]:
    """'copydesk feeds add' -> its options (with the global ones)."""
    found: dict[str, set[str]] = {}
    for path, command in gen_cli.walk(root_command, ("copydesk",)):
        flags = {f for p in command.params for f in (*p.opts, *p.secondary_opts)}
        found[" ".join(path)] = flags | {"--help"}
    return found


def _spans(text: str) -> list[str]:
    """What names a command: an inline code span, or a `copydesk ...` in a code block
    (up to a shell operator)."""
    spans = _CODE.findall(text)
    for lang, block in re.findall(r"^```([^\n]*)\n(.*?)^```", text, re.M | re.S):
        if lang.strip() in ("", "sh", "bash", "console", "cron"):
            spans += re.findall(r"(?:^|\s|bin/)(copydesk(?: [^\s&|;>]+)+)", block, re.M)
    return spans


def command_problems(text: str, commands: dict[str, set[str]]) -> list[str]:
    """`copydesk X [Y] [--opt ...]` spans naming a command or an option that is not there."""
    problems = []
    is_word = re.compile(r"[a-z][a-z-]*").fullmatch
    for span in _spans(text):
        words = span.split()
        if words[:1] != ["copydesk"]:
            continue
        name, rest, globals_ = "copydesk", words[1:], commands["copydesk"]
        while rest and rest[0] in globals_:  # --log-format json run ...
            rest = rest[2:] if len(rest) > 1 and f"copydesk {rest[1]}" not in commands else rest[1:]
        while rest and is_word(rest[0]) and f"{name} {rest[0]}" in commands:
            name, rest = f"{name} {rest[0]}", rest[1:]
        if rest and is_word(rest[0]) and name == "copydesk":
            problems.append(f"no command `copydesk {rest[0]}`")
            continue
        for word in rest:
            flag = word.split("=")[0].rstrip(",.;:)")
            if re.fullmatch(r"--[a-z][a-z-]*", flag) and flag not in commands[name] | globals_:
                problems.append(f"`{name}` has no option {flag}")
    return problems


def page_problems(root: Path, commands: dict[str, set[str]]) -> list[str]:
    problems = []
    for page in pages(root):
        text = page.read_text(encoding="utf-8")
        where = page.relative_to(root)
        for target in _LINK.findall(text):
            if target.startswith(("http://", "https://", "mailto:", "#")):
                continue
            if not (page.parent / target.split("#")[0]).exists():
                problems.append(f"{where}: link to {target}: no such file")
        for token in _CODE.findall(text):
            token = token.strip()
            if _is_repo_path(token) and not any(root.glob(token.rstrip("/"))):
                problems.append(f"{where}: `{token}`: no such path")
        problems += [f"{where}: {p}" for p in command_problems(text, commands)]
    return problems


def test_every_link_path_and_command_on_the_pages_exists():
    assert page_problems(ROOT, _commands(gen_cli.root_command())) == []


def test_the_page_check_sees_a_missing_path_link_command_and_option(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "copydesk").mkdir()
    (tmp_path / "copydesk" / "config.py").write_text("", encoding="utf-8")
    (tmp_path / "docs" / "a.md").write_text(
        "See `copydesk/config.py` and `copydesk/pipeline.py`, [the rules](../RULES.md),\n"
        "[ok](../copydesk/config.py), `copydesk run --all`, `copydesk runn`,\n"
        "`copydesk feeds add URL --name N`, `copydesk feeds list --colour`.\n"
        "```sh\n0 * * * *  .venv/bin/copydesk --config c.toml publish --everything\n```\n",
        encoding="utf-8",
    )
    commands = {
        "copydesk": {"--config"},
        "copydesk run": {"--all"},
        "copydesk publish": {"--item"},
        "copydesk feeds": set(),
        "copydesk feeds add": {"--name"},
        "copydesk feeds list": {"--check"},
    }
    assert page_problems(tmp_path, commands) == [
        "docs/a.md: link to ../RULES.md: no such file",
        "docs/a.md: `copydesk/pipeline.py`: no such path",
        "docs/a.md: no command `copydesk runn`",
        "docs/a.md: `copydesk feeds list` has no option --colour",
        "docs/a.md: `copydesk publish` has no option --everything",
    ]
