"""`copydesk eval`: the pack, its validation, the scoring of the gate stack, the
run log and facts file, and the independent verifier (`evals/verify.py`)."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from copydesk.cli import app
from copydesk.evaluation import score as ev
from copydesk.evaluation.pack import KINDS, TRAPS, PackError, default_pack_dir, load_pack
from guards.checks import NO_PASSAGE_WORDS
from guards.registry import CHECK_GATES, DEFAULT_MODES, DRAFT_GATES

ROOT = Path(__file__).resolve().parent.parent
PACK = ROOT / "evals" / "pack"
VERIFY = ROOT / "evals" / "verify.py"

NUMBER_SLIPS = ("changed_number", "hidden_number", "decimal_shift")

# Planted errors a deterministic gate of the stack is designed for but does not
# catch yet, each with why. The test below fails when one of them starts being
# caught (remove it here) or when any other planted error is missed.
# a09-s02 (ellipsis fragments far apart) was one until issue 8 bounded the omission.
KNOWN_GAPS: dict[str, str] = {}


@pytest.fixture(scope="module")
def pack():
    return load_pack(PACK)


@pytest.fixture(scope="module")
def default_run(pack):
    stack = ev.Stack({g: DEFAULT_MODES[g] for g in DRAFT_GATES})
    records = ev.score(pack, stack)
    return stack, records, ev.facts(pack, records, {"run_id": "test"})


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "config.toml"
    config.write_text("[gates]\nmin_source_words = 150\n", encoding="utf-8")
    monkeypatch.setenv("COPYDESK_CONFIG", str(config))
    monkeypatch.setenv("COPYDESK_DATABASE_URL", f"sqlite:///{tmp_path / 'unused.db'}")
    return tmp_path


def run_eval(*args: str):
    return CliRunner().invoke(app, ["eval", *args])


# --- the pack ----------------------------------------------------------------------


def test_pack_meets_the_size_the_issue_asks_for(pack):
    summaries = pack.summaries
    assert default_pack_dir() == PACK
    assert len(pack.articles) >= 10
    assert len(summaries) >= 80
    assert sum(s.clean for s in summaries) >= 25
    for kind in KINDS:
        assert sum(s.kind == kind for s in summaries) >= 3, kind
    for article in pack.articles:
        assert 250 <= len(article.text.split()) <= 700, article.id
        assert len(article.summaries) >= 5, article.id
    assert sum(len(a.hard_cases) for a in pack.articles) >= 5


def test_every_trap_kind_is_in_the_pack(pack):
    traps = {s.trap for s in pack.summaries if s.clean}
    assert traps == set(TRAPS)


def test_same_figure_traps_carry_the_figure_a_neighbour_gets_wrong(pack):
    """Every changed, hidden or shifted number has a clean neighbour that writes the
    true figure exactly, so a gate that flags figures by resemblance is caught out."""
    mangled = [s for s in pack.summaries if s.kind in NUMBER_SLIPS]
    assert len(mangled) == 9
    for s in mangled:
        assert s.truth and ev.mentions(pack.article(s.article).text, s.truth), s.id
        assert not ev.mentions(s.text, s.truth), s.id
        neighbours = [c for c in pack.article(s.article).summaries if c.clean]
        assert any(ev.mentions(c.text, s.truth) for c in neighbours), s.id


def _copy_pack(tmp_path: Path) -> Path:
    target = tmp_path / "pack"
    shutil.copytree(PACK, target)
    return target


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


BROKEN = [
    ("manifest.toml", "summaries = 82", "summaries = 83", "declares 83 summaries"),
    ("manifest.toml", "clean = 31", "clean = 30", "declares 30 clean"),
    ("manifest.toml", "changed_number = 3", "changed_number = 4", "declares 4 changed_number"),
    ("manifest.toml", "changed_number = 3", "changed_numbr = 3", "unknown kind"),
    ("manifest.toml", "\nchanged_date = 3\n", "\n", "does not declare a count for changed_date"),
    ("manifest.toml", 'changed_date = "dates_grounded"', 'changed_date = "x"', "designed_gates"),
    ("manifest.toml", "a10_vell_county_budget", "a10_missing", "file not found"),
    (
        "articles/a01_vellmouth_repairs.toml",
        'key = "changed_number"',
        'key = "typo"',
        "unknown kind",
    ),
    (
        "articles/a01_vellmouth_repairs.toml",
        'gate = "numbers_grounded"\nevidence = ["19"]',
        'gate = "quotes_verbatim"\nevidence = ["19"]',
        "designed for gate numbers_grounded",
    ),
    ("articles/a01_vellmouth_repairs.toml", 'evidence = ["19"]', "evidence = []", "evidence"),
    ("articles/a01_vellmouth_repairs.toml", 'id = "a01-s03"', 'id = "a01-s02"', "used twice"),
    ("articles/a01_vellmouth_repairs.toml", 'id = "a01-s03"', 'id = "a02-s99"', "must start"),
    ("articles/a01_vellmouth_repairs.toml", 'trap = "dense"', 'trap = "dence"', "trap"),
    ("articles/a01_vellmouth_repairs.toml", "text = '''\nMore", "text = '''\n", "words"),
    ("articles/a01_vellmouth_repairs.toml", 'verdict = "unfaithful"', 'verdict = "meh"', "verdict"),
    ("articles/a02_port_ellery_emergency.toml", "[[summary]]", "[[summary]", "cannot read"),
    (
        "articles/a01_vellmouth_repairs.toml",
        'kinds = ["framing"]',
        'kinds = ["vibes"]',
        "judge kind",
    ),
    ("manifest.toml", "scripted = 81", "scripted = 80", "declares 80 scripted"),
    (
        "manifest.toml",
        '"scripted/a01.json",',
        '"scripted/a01.json", "scripted/a01.json",',
        "second",
    ),
]


@pytest.mark.parametrize(("file", "old", "new", "reason"), BROKEN)
def test_a_broken_pack_is_refused_with_the_reason(tmp_path, file, old, new, reason):
    root = _copy_pack(tmp_path)
    if file.endswith("a01_vellmouth_repairs.toml") and new == "text = '''\n":
        # Cut the article to a few words: below the 250-word floor.
        path = root / file
        text = path.read_text(encoding="utf-8")
        start = text.index("text = '''\n") + len("text = '''\n")
        end = text.index("'''", start)
        path.write_text(text[:start] + "Too short.\n" + text[end:], encoding="utf-8")
    else:
        _edit(root / file, old, new)
    with pytest.raises(PackError, match=reason):
        load_pack(root)


def test_cli_reports_an_unwritable_run_folder_or_a_missing_pack_in_one_line(workdir):
    (workdir / "taken").write_text("a file where the run folder would go")
    result = run_eval("--out", "taken")
    assert result.exit_code == 3 and "cannot write the run to taken/" in result.stderr
    assert result.stderr.count("\n") == 1
    missing = run_eval("--pack", str(workdir / "nowhere"))
    assert missing.exit_code == 3 and "manifest.toml: file not found" in missing.stderr


def test_compare_prints_names_from_run_files_as_plain_text(workdir):
    a = json.loads(run_eval("--out", "runs", "--json").stdout)["run"]["run_id"]
    b_dir = workdir / "runs" / "b"
    shutil.copytree(workdir / "runs" / a, b_dir)
    facts = json.loads((b_dir / ev.FACTS_FILE).read_text())
    facts["gates"]["[bold red]x[/bold red]"] = facts["gates"]["numbers_grounded"]
    (b_dir / ev.FACTS_FILE).write_text(json.dumps(facts))
    table = run_eval("--out", "runs", "--compare", a, "b")
    assert table.exit_code == 0 and "[bold red]x[/bold red]" in table.stdout


def test_cli_refuses_a_broken_pack_in_one_line(workdir):
    root = _copy_pack(workdir)
    _edit(root / "manifest.toml", "clean = 31", "clean = 40")
    result = run_eval("--pack", str(root))
    assert result.exit_code == 3
    assert result.stderr.count("\n") == 1
    assert "the evaluation pack is broken: manifest declares 40 clean" in result.stderr
    assert not (workdir / "eval-runs").exists()  # nothing ran


# --- what the deterministic gates catch ----------------------------------------------


def test_deterministic_gates_catch_every_planted_error_they_are_designed_for(pack, default_run):
    """The promise `make test` keeps: every gate of the deterministic stack catches,
    for the right reason, every planted error it is designed for, and flags no
    clean summary. Known gaps are listed above and must still be gaps."""
    stack, records, facts = default_run
    deterministic = {gate for gate in KINDS.values() if gate not in CHECK_GATES}
    assert deterministic <= set(stack.gates)  # every designed gate runs by default
    designed = [s for s in pack.summaries if s.gate in stack.gates]
    assert len(designed) == sum(s.gate in deterministic for s in pack.summaries) == 33
    outcomes = {(r.case, r.gate): r.outcome for r in records}
    for s in designed:
        got = outcomes[(s.id, s.gate)]
        if s.id in KNOWN_GAPS:
            assert got == "missed", f"{s.id} is caught now: remove it from KNOWN_GAPS"
        else:
            assert got == "caught", f"{s.id} ({s.kind}): {got}"
    for gate in stack.gates:
        assert facts["gates"][gate]["false_alarms"] == 0, gate
        assert facts["gates"][gate]["clean_checked"] == sum(s.clean for s in pack.summaries)
        assert facts["gates"][gate]["incidental"] == 0, gate


def test_a_finding_for_the_wrong_reason_is_not_a_catch(pack):
    s = next(x for x in pack.summaries if x.id == "a01-s03")  # 19 where the source says 17
    right = ev.outcome(s, "numbers_grounded", False, "1 of 3 numbers not in the source: 19", [])
    wrong = ev.outcome(s, "numbers_grounded", False, "1 of 3 numbers not in the source: 64", [])
    # The evidence lists 19, but the gate marked it found: that is not what it objects to.
    found = [{"number": "19", "found": True}, {"number": "64", "found": False}]
    hidden = ev.outcome(s, "numbers_grounded", False, "1 number not in the source", found)
    assert (right, wrong, hidden) == ("caught", "wrong_reason", "wrong_reason")
    assert ev.outcome(s, "numbers_grounded", True, "all found", []) == "missed"
    assert ev.outcome(s, "quotes_verbatim", False, "x", []) == "incidental"


@pytest.mark.parametrize(
    ("haystack", "needle", "expected"),
    [
        ("not in the source: 231", "231", True),
        ("not in the source: 2,310", "231", False),
        ("not in the source: 2,310", "31", False),
        ("value 8.31 here", "31", False),
        ("value 31.5 here", "31", False),
        ("value 31, then", "31", True),
        ("nesting merlins", "merlin", False),
        ("“A Rescue,  not a gesture”", '"a rescue, not a gesture"', True),
        ("Residents’ groups", "Residents' groups", True),
    ],
)
def test_evidence_matches_whole_words_and_numbers(haystack, needle, expected):
    assert ev.mentions(haystack, needle) is expected


def test_the_spliced_quotations_each_break_a_different_rule(pack):
    """Out of order, too far apart, and a dropped negation: each spliced case is
    refused by quotes_verbatim for its own reason, so no single rule covers them."""
    from guards.quotes import quotes_verbatim

    mechanics = {}
    for s in pack.summaries:
        if s.kind != "spliced_quote":
            continue
        source = pack.article(s.article).text
        (quote,) = quotes_verbatim(source, None, s.text).evidence
        first, second = (f["text"] for f in quote["fragments"])
        assert first.lower() in source.lower() and second.lower() in source.lower(), s.id
        omission = quote.get("omission") or ""
        if "negation" in omission:
            mechanics[s.id] = "negation"
        elif "characters apart" in omission:
            mechanics[s.id] = "distance"
        elif source.lower().find(second.lower()) < source.lower().find(first.lower()):
            mechanics[s.id] = "order"
    assert sorted(mechanics.values()) == ["distance", "negation", "order"], mechanics


# --- the command --------------------------------------------------------------------


def test_eval_writes_log_and_facts_and_prints_the_table(workdir, pack):
    result = run_eval()
    assert result.exit_code == (1 if KNOWN_GAPS else 0)  # a known gap is a miss
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Model checks: SCRIPTED replies shipped with the pack")
    assert "numbers_grounded" in result.stdout and "spliced_quote" in result.stdout
    folders = list((workdir / "eval-runs").iterdir())
    assert len(folders) == 1 and folders[0].name.startswith(ev.run_folder(Path(), "x").name[:10])
    log = [json.loads(x) for x in (folders[0] / ev.LOG_FILE).read_text().splitlines()]
    assert log[0]["type"] == "run" and log[0]["pack"]["digest"] == pack.digest
    verdicts = [x for x in log if x["type"] == "verdict"]
    gates = len(ev.Stack(dict(DEFAULT_MODES)).gates) + len(CHECK_GATES)
    model_not_run = [x for x in log if x["type"] == "not_run" and x["mode"] is not None]
    assert len(verdicts) + len(model_not_run) == len(pack.summaries) * gates
    not_run = [x for x in log if x["type"] == "not_run"]
    assert {x["reason"] for x in not_run if x["gate"] == "names_grounded"} <= {"not in the stack"}
    facts = json.loads((folders[0] / ev.FACTS_FILE).read_text())
    assert facts["kinds"]["spliced_quote"]["missed"] == len(KNOWN_GAPS)
    # a06-s08: its scripted judge names an immaterial framing error, a flag (issue 19).
    assert facts["stack"]["clean_flagged"] == len(SCRIPTED_CLEAN_FLAGS)


def test_eval_json_is_the_facts_file(workdir):
    result = run_eval("--json", "--out", "runs")
    facts = json.loads(result.stdout)
    folder = workdir / "runs" / facts["run"]["run_id"]
    assert json.loads((folder / ev.FACTS_FILE).read_text()) == facts


def test_the_run_folder_names_the_gate_modes(workdir):
    run_eval("--out", "runs")
    (workdir / "config.toml").write_text(
        '[gates.modes]\nquotes_verbatim = "off"\n', encoding="utf-8"
    )
    result = run_eval("--out", "runs", "--json")
    facts = json.loads(result.stdout)
    assert "quotes_verbatim" not in facts["gates"]
    assert facts["kinds"]["invented_quote"]["not_run"] == 3
    assert len(list((workdir / "runs").iterdir())) == 2


def test_a_second_run_of_the_same_identity_never_overwrites_the_first(workdir):
    first = json.loads(run_eval("--out", "runs", "--json").stdout)["run"]
    first_facts = (workdir / "runs" / first["run_id"] / ev.FACTS_FILE).read_bytes()
    second = json.loads(run_eval("--out", "runs", "--json").stdout)["run"]
    third = json.loads(run_eval("--out", "runs", "--json").stdout)["run"]
    assert second["run_id"] == first["run_id"] + "-2"
    assert third["run_id"] == first["run_id"] + "-3"
    assert first["run_id"] == ev.run_folder(Path(), first["run_id"][11:]).name  # date_hash
    assert sorted(p.name for p in (workdir / "runs").iterdir()) == sorted(
        [first["run_id"], second["run_id"], third["run_id"]]
    )
    assert (workdir / "runs" / first["run_id"] / ev.FACTS_FILE).read_bytes() == first_facts
    for run in (second, third):
        header = json.loads((workdir / "runs" / run["run_id"] / ev.LOG_FILE).open().readline())
        assert header["run_id"] == run["run_id"]


def test_claimed_run_folders_are_distinct_even_when_claimed_at_once(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8) as pool:
        folders = list(pool.map(lambda _: ev.claim_run_folder(tmp_path, "abc"), range(16)))
    assert len(set(folders)) == 16 and all(f.is_dir() for f in folders)


def test_compare_shows_what_changed_between_two_runs(workdir):
    a = json.loads(run_eval("--out", "runs", "--json").stdout)["run"]["run_id"]
    (workdir / "config.toml").write_text('[gates.modes]\nquotes_verbatim = "off"\n')
    b = json.loads(run_eval("--out", "runs", "--json").stdout)["run"]["run_id"]
    result = run_eval("--out", "runs", "--compare", a, b, "--json")
    assert result.exit_code == 0, result.output
    changes = json.loads(result.stdout)["changes"]
    assert {"section": "kinds", "name": "invented_quote", "figure": "caught", "a": 3, "b": 0} in (
        changes
    )
    assert all(c["name"] != "numbers_grounded" for c in changes)
    table = run_eval("--out", "runs", "--compare", a, b)
    assert "invented_quote" in table.stdout
    missing = run_eval("--out", "runs", "--compare", a, "nope")
    assert missing.exit_code == 1 and "no stored run 'nope'" in missing.stderr


@pytest.mark.parametrize("args", [["--calibrate"], ["--runs", "3"]])
def test_model_options_without_a_model_say_so_and_exit_2(workdir, args):
    result = run_eval(*args)
    assert result.exit_code == 2
    assert "needs a model" in result.stderr and "ANTHROPIC_API_KEY" in result.stderr
    assert not (workdir / "eval-runs").exists()


# --- the independent verifier ----------------------------------------------------------


def _verify(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(VERIFY), *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def run_dir(workdir) -> Path:
    facts = json.loads(run_eval("--json").stdout)
    return workdir / "eval-runs" / facts["run"]["run_id"]


def test_verifier_agrees_with_an_honest_run(run_dir):
    done = _verify(str(run_dir))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "agrees with the run log" in done.stdout


def test_verifier_names_each_difference(run_dir):
    path = run_dir / ev.FACTS_FILE
    facts = json.loads(path.read_text())
    facts["kinds"]["hidden_number"]["caught"] = 2
    facts["gates"]["quotes_verbatim"]["false_alarms"] = 1
    path.write_text(json.dumps(facts))
    done = _verify(str(run_dir))
    assert done.returncode == 1
    assert "kinds.hidden_number.caught: facts say 2, the run log gives 3" in done.stdout
    assert "gates.quotes_verbatim.false_alarms: facts say 1, the run log gives 0" in done.stdout


def test_verifier_recomputes_outcomes_from_the_raw_verdicts(run_dir):
    """A log whose outcome labels were doctored is caught: the verifier decides
    each outcome from the verdict and its own copy of the key."""
    path = run_dir / ev.LOG_FILE
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    for line in lines:
        if line.get("outcome") == "missed":
            line["outcome"] = "caught"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    done = _verify(str(run_dir))
    assert done.returncode == 1
    assert "a07-s06 faithfulness: outcome 'caught', the verdict says 'missed'" in done.stdout


def test_verifier_refuses_a_run_made_with_another_pack(run_dir, tmp_path):
    other = _copy_pack(tmp_path)
    _edit(other / "articles/a01_vellmouth_repairs.toml", "black mould", "black mold")
    done = _verify(str(run_dir), "--pack", str(other))
    assert done.returncode == 1 and "different pack" in done.stdout


def test_verifier_selftest_catches_all_four_plants(run_dir):
    done = _verify("--selftest", str(run_dir))
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 5 and all(line.startswith("ok") for line in lines)
    for plant in ("inflated catch count", "false alarm dropped", "miss moved", "rate"):
        assert any(plant in line for line in lines), plant


def test_verifier_uses_the_standard_library_only_and_no_project_code():
    tree = ast.parse(VERIFY.read_text(encoding="utf-8"))
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            modules.add((node.module or "").split(".")[0])
    assert modules - {"__future__"} <= set(sys.stdlib_module_names), modules
    assert tomllib.__name__ in modules  # it reads the pack itself


# --- the scripted model path ------------------------------------------------------------

SCRIPTED_MISSES = {"a07-s06": "missed", "a09-s06": "wrong_reason"}
# A clean summary whose scripted judge names an error kind it calls not material:
# any named kind is at least a flag (issue 19), so the editor sees it.
SCRIPTED_CLEAN_FLAGS = {"a06-s08": "false_alarm"}


@pytest.fixture(scope="module")
def scripted_records(pack):
    stack = ev.Stack({g: DEFAULT_MODES[g] for g in DRAFT_GATES})
    model = ev.ModelChecks({g: DEFAULT_MODES[g] for g in CHECK_GATES}, pack.scripted)
    return ev.score(pack, stack, model)


def test_scripted_replies_exercise_every_branch_of_the_verification(scripted_records):
    """Every rule of claims_supported, every outcome of faithfulness, and every way a
    check fails closed, is reached by some scripted reply of the pack."""
    claims = [r for r in scripted_records if r.gate == "claims_supported"]
    judged = [r for r in scripted_records if r.gate == "faithfulness"]
    rules = {e["rule"] for r in claims if isinstance(r.evidence, list) for e in r.evidence}
    assert rules >= {
        None,  # supported
        "empty claim",
        "no passage",
        "passage not in the source",  # a passage the model invented
        "number not in the passage",
        "the model says the passage does not support it",
    }
    assert any(r.reason == "the model listed no claims for a non-empty draft" for r in claims)
    ran = [r for r in judged if r.type == "verdict"]
    entries = [e for r in ran for e in r.evidence["sentences"]]
    outcomes = {e["outcome"] for e in entries}
    assert outcomes >= {"wrong fact", "material error", "minor error", "faithful", "not verified"}
    whys = {e["why"] for e in entries if e["outcome"] == "not verified"}
    assert whys == {
        "the sentence is not in the draft",
        NO_PASSAGE_WORDS,
        "the passage is not in the source",
    }
    assert any(r.evidence["not_judged"] for r in ran)
    assert any(r.reason == "the model judged no sentence of a non-empty draft" for r in judged)
    # Failing closed: a check that could not run is never a pass, nor a false alarm.
    not_run = {r.case: r.reason for r in judged if r.type == "not_run"}
    assert not_run["a05-s04"] == "not run (no scripted reply)"
    assert not_run["a02-s04"].startswith("failed (the record_checks input breaks the schema")
    assert "sentences.0.errors.0" in not_run["a08-s06"]
    assert all(r.outcome == "not_run" for r in scripted_records if r.type == "not_run")


def test_scripted_judge_outcomes_are_scored_against_the_key(pack, scripted_records):
    outcomes = {r.case: r.outcome for r in scripted_records if r.gate == "faithfulness"}
    for s in pack.summaries:
        if s.gate == "faithfulness":
            assert outcomes[s.id] == SCRIPTED_MISSES.get(s.id, "caught"), s.id
        elif s.clean:
            assert outcomes[s.id] == SCRIPTED_CLEAN_FLAGS.get(s.id, "pass"), s.id
    clean = {s.id for s in pack.summaries if s.clean}
    claims = [r for r in scripted_records if r.gate == "claims_supported" and r.case in clean]
    assert claims and all(r.outcome == "pass" for r in claims)
    # The spliced quotation the quotes gate misses is found by the judge.
    assert outcomes["a09-s02"] == "incidental"


def test_a_scripted_reply_for_a_summary_the_pack_lacks_is_refused(tmp_path):
    root = _copy_pack(tmp_path)
    path = root / "scripted" / "a01.json"
    replies = json.loads(path.read_text(encoding="utf-8"))
    replies["a01-s99"] = replies["a01-s01"]
    path.write_text(json.dumps(replies), encoding="utf-8")
    with pytest.raises(PackError, match="summaries the pack does not have: \\['a01-s99'\\]"):
        load_pack(root)
