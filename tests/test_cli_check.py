"""`copydesk check`: the deterministic gates from the command line, one pair or a stream."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from copydesk.cli import app as cli_app
from copydesk.cli import check as check_commands
from guards.registry import DEFAULT_MODES, DRAFT_GATES, SOURCE_GATES
from tests.check_helpers import ARTICLE, GOOD, URL, pair, write_config

WRONG_NUMBER = GOOD.replace("4,080", "4,800")
WRONG_QUOTE = GOOD.replace("better than any of us dared hope", "a triumph for the whole town")


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def app() -> typer.Typer:
    """The real command line, as installed."""
    return cli_app


@pytest.fixture(autouse=True)
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test runs in its own directory with its own config (all gates `discard`)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COPYDESK_DATABASE_URL", f"sqlite:///{tmp_path / 'unused.db'}")
    config = write_config(tmp_path / "config.toml")
    monkeypatch.setenv("COPYDESK_CONFIG", str(config))
    return config


# --- one pair ---------------------------------------------------------------------------------


def test_faithful_draft_passes_every_gate(app, runner, tmp_path):
    src, dft = pair(tmp_path, GOOD)
    result = runner.invoke(app, ["check", src, dft, "--url", URL])
    assert result.exit_code == 0, result.output
    for gate in SOURCE_GATES + DRAFT_GATES:
        assert gate in result.stdout
    assert "FAILED" not in result.stdout
    assert "passed: no hard gate failed" in result.stdout


def test_changed_number_fails_numbers_grounded_with_evidence(app, runner, tmp_path):
    src, dft = pair(tmp_path, WRONG_NUMBER)
    result = runner.invoke(app, ["check", src, dft, "--url", URL])
    assert result.exit_code == 1, result.output
    assert "numbers_grounded evidence:" in result.stdout
    missing = [line for line in result.stdout.splitlines() if "NOT FOUND" in line]
    # 4,800 twice (headline and summary); 2,500, which the source has, is not marked.
    assert len(missing) == 2 and all("4,800" in line for line in missing)
    assert "2,500" in result.stdout
    assert "failed: numbers_grounded" in result.stdout


def test_invented_quote_fails_quotes_verbatim(app, runner, tmp_path):
    src, dft = pair(tmp_path, WRONG_QUOTE)
    result = runner.invoke(app, ["check", src, dft, "--url", URL, "--json"])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    verdicts = {v["gate"]: v for v in doc["verdicts"]}
    assert doc["passed"] is False
    assert verdicts["quotes_verbatim"]["passed"] is False
    assert verdicts["numbers_grounded"]["passed"] is True
    assert "a triumph for the whole town" in json.dumps(verdicts["quotes_verbatim"]["evidence"])


def test_json_lists_every_gate_in_order_with_its_mode(app, runner, tmp_path):
    src, dft = pair(tmp_path, WRONG_NUMBER)
    result = runner.invoke(app, ["check", src, dft, "--url", URL, "--json"])
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert set(doc) == {"passed", "verdicts"}
    assert [v["gate"] for v in doc["verdicts"]] == list(SOURCE_GATES + DRAFT_GATES)
    for v in doc["verdicts"]:
        assert set(v) == {"gate", "passed", "mode", "reason", "evidence"}
        assert v["mode"] == DEFAULT_MODES[v["gate"]]  # names and dates flag, the rest discard
    failed = [v["gate"] for v in doc["verdicts"] if not v["passed"]]
    assert failed == ["numbers_grounded"]


def test_flag_mode_failure_is_reported_but_does_not_fail(app, runner, tmp_path, settings):
    write_config(settings, {"numbers_grounded": "flag"})
    src, dft = pair(tmp_path, WRONG_NUMBER)
    result = runner.invoke(app, ["check", src, dft, "--url", URL, "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    numbers = next(v for v in doc["verdicts"] if v["gate"] == "numbers_grounded")
    assert doc["passed"] is True
    assert numbers == numbers | {"passed": False, "mode": "flag"}

    text = runner.invoke(app, ["check", src, dft, "--url", URL])
    assert text.exit_code == 0
    assert "failed (flag)" in text.stdout


def test_gate_off_is_not_run(app, runner, tmp_path, settings):
    write_config(settings, {"numbers_grounded": "off"})
    src, dft = pair(tmp_path, WRONG_NUMBER)
    result = runner.invoke(app, ["check", src, dft, "--url", URL, "--json"])
    assert result.exit_code == 0, result.output
    assert "numbers_grounded" not in [v["gate"] for v in json.loads(result.stdout)["verdicts"]]


def test_teaser_source_fails_source_length(app, runner, tmp_path):
    teaser = "Port Elsmere launches a flood-warning text service. 4,080 households signed up."
    src, dft = pair(tmp_path, "4,080 households signed up.", source=teaser)
    result = runner.invoke(app, ["check", src, dft, "--url", URL, "--json"])
    assert result.exit_code == 1
    failed = [v["gate"] for v in json.loads(result.stdout)["verdicts"] if not v["passed"]]
    assert failed == ["source_length"]


def test_bad_url_fails_source_url(app, runner, tmp_path):
    src, dft = pair(tmp_path, GOOD)
    result = runner.invoke(app, ["check", src, dft, "--url", "/port-elsmere", "--json"])
    assert result.exit_code == 1
    failed = [v["gate"] for v in json.loads(result.stdout)["verdicts"] if not v["passed"]]
    assert failed == ["source_url"]


def test_untrusted_text_is_never_markup_nor_terminal_control(app, runner, tmp_path):
    """A hostile URL and quote are printed as they are: brackets shown, escapes defused."""
    hostile_quote = GOOD.replace("better than any of us dared hope", "[/] [bold]flooded[/bold]")
    src, dft = pair(tmp_path, hostile_quote)
    url = "ftp://news.example.org/[link=https://evil.example]x[/link]\x1b[2J"
    result = runner.invoke(app, ["check", src, dft, "--url", url])
    assert result.exit_code == 1, result.output
    assert "[link=https://evil.example]x[/link]" in result.stdout
    assert "[bold]flooded[/bold]" in result.stdout
    assert "\x1b[2J" not in result.stdout
    assert "\\u001b[2J" in result.stdout


@pytest.mark.parametrize(
    "args_of, message",
    [
        (lambda s, d: ["check"], "give SOURCE_FILE DRAFT_FILE"),
        (lambda s, d: ["check", s, "--url", URL], "give SOURCE_FILE DRAFT_FILE"),
        (lambda s, d: ["check", s, d], "--url URL is required"),
        (lambda s, d: ["check", s, "missing.txt", "--url", URL], "DRAFT_FILE missing.txt does not"),
        (lambda s, d: ["check", ".", d, "--url", URL], "cannot read SOURCE_FILE ."),
        (lambda s, d: ["check", s, d, "--jsonl", "x.jsonl"], "not both"),
        (lambda s, d: ["check", "--jsonl", s, "--url", URL], "--url goes with"),
        (lambda s, d: ["check", "--jsonl", "missing.jsonl"], "missing.jsonl does not exist"),
    ],
)
def test_bad_usage_exits_2_with_one_line(app, runner, tmp_path, args_of, message):
    src, dft = pair(tmp_path, GOOD)
    result = runner.invoke(app, args_of(src, dft))
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert result.stderr.count("\n") == 1
    assert result.stdout == ""


def test_file_that_is_not_utf8_is_a_usage_error(app, runner, tmp_path):
    src, dft = pair(tmp_path, GOOD)
    Path(dft).write_bytes(b"Port Elsmere \xff\xfe households")
    result = runner.invoke(app, ["check", src, dft, "--url", URL])
    assert result.exit_code == 2
    assert "is not UTF-8 text" in result.stderr


# --- many pairs -------------------------------------------------------------------------------


def generated_pairs(n: int) -> tuple[list[dict], dict]:
    """n pairs over n variants of the article; every third draft misstates the
    figure, every fifth invents a quote. Returns the lines and id -> should pass."""
    lines, expected = [], {}
    for i in range(n):
        figure = 10_000 + 7 * i
        source = ARTICLE.replace("4,080", f"{figure:,}")
        stated = figure + 3 if i % 3 == 0 else figure
        quote = "a triumph for the whole town" if i % 5 == 0 else "better than any of us dared hope"
        summary = (
            f"The harbour authority says {stated:,} households joined its flood-warning "
            f'service. Ines Kalloway called it "{quote}".'
        )
        item_id = i if i % 2 else f"pair-{i}"
        lines.append({"id": item_id, "source": source, "summary": summary, "url": URL})
        expected[json.dumps(item_id)] = i % 3 != 0 and i % 5 != 0
    return lines, expected


def test_jsonl_thousand_pairs_one_line_each_with_the_right_verdict(app, runner, tmp_path):
    lines, expected = generated_pairs(1000)
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    result = runner.invoke(app, ["check", "--jsonl", str(path)])
    assert result.exit_code == 1
    out_lines = result.stdout.splitlines()
    assert len(out_lines) == 1000
    got = {}
    for raw in out_lines:
        doc = json.loads(raw)
        got[json.dumps(doc["id"])] = doc["passed"]
        failed = {v["gate"] for v in doc["verdicts"] if not v["passed"]}
        assert failed <= {"numbers_grounded", "quotes_verbatim"}
        assert doc["passed"] == (not failed)
    assert got == expected
    assert "checked 1000:" in result.stderr


def test_jsonl_from_stdin_all_passing_exits_0(app, runner):
    lines, expected = generated_pairs(30)
    good = [line for line in lines if expected[json.dumps(line["id"])]]
    stdin = "".join(json.dumps(line) + "\n" for line in good)
    result = runner.invoke(app, ["check", "--jsonl", "-"], input=stdin)
    assert result.exit_code == 0, result.output
    docs = [json.loads(raw) for raw in result.stdout.splitlines()]
    assert [d["id"] for d in docs] == [line["id"] for line in good]
    assert all(d["passed"] for d in docs)


def test_jsonl_malformed_lines_are_reported_and_the_run_goes_on(app, runner, tmp_path):
    good = {"id": "ok-1", "source": ARTICLE, "summary": GOOD, "url": URL}
    raw_lines = [
        json.dumps(good).encode(),
        b"{not json",
        b"[1, 2, 3]",
        json.dumps({"id": "no-summary", "source": ARTICLE, "url": URL}).encode(),
        json.dumps({"id": 7, "source": ARTICLE, "summary": GOOD, "url": 42}).encode(),
        b"   ",
        b'{"id": "latin1", "source": "caf\xe9", "summary": "x", "url": null}',
        json.dumps(good | {"id": "ok-2"}).encode(),
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join(raw_lines) + b"\n")
    result = runner.invoke(app, ["check", "--jsonl", str(path)])
    assert result.exit_code == 1
    docs = [json.loads(raw) for raw in result.stdout.splitlines()]
    assert len(docs) == 7  # the blank line is skipped
    assert docs[0] == docs[0] | {"id": "ok-1", "passed": True}
    assert docs[-1] == docs[-1] | {"id": "ok-2", "passed": True}
    errors = docs[1:-1]
    assert [(d["id"], d["line"]) for d in errors] == [
        (None, 2),
        (None, 3),
        ("no-summary", 4),
        (7, 5),
        (None, 7),
    ]
    for d in errors:
        assert d["passed"] is False
        assert d["error"].startswith(f"line {d['line']}: ")
        assert d["verdicts"] == []  # the documented shape, even for a bad line
    assert '"summary" must be a string' in errors[2]["error"]
    assert '"url" must be a string or null' in errors[3]["error"]
    assert "checked 7: 2 passed, 0 failed, 5 malformed" in result.stderr


def test_jsonl_missing_url_fails_source_url_not_the_line(app, runner):
    line = json.dumps({"id": "no-url", "source": ARTICLE, "summary": GOOD})
    result = runner.invoke(app, ["check", "--jsonl", "-"], input=line + "\n")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["id"] == "no-url" and "error" not in doc
    assert [v["gate"] for v in doc["verdicts"] if not v["passed"]] == ["source_url"]


def test_check_jsonl_function_streams_without_a_terminal():
    """The stream path is a plain function: usable from bench/ without typer."""
    import io

    lines, expected = generated_pairs(10)
    source = io.BytesIO("".join(json.dumps(line) + "\n" for line in lines).encode())
    output = io.StringIO()
    gates = check_commands.Gates(
        {g: "discard" for g in SOURCE_GATES + DRAFT_GATES}, min_source_words=150
    )
    code = check_commands.check_jsonl(source, output, gates)
    docs = [json.loads(raw) for raw in output.getvalue().splitlines()]
    assert code == 1
    assert {json.dumps(d["id"]): d["passed"] for d in docs} == expected


# --- --jsonl over several processes ---------------------------------------------------------------

_PIDS = "COPYDESK_TEST_CHECK_PIDS"


def _recording_chunk(gates, chunk):
    """`check._check_chunk`, noting which process ran it (a forked worker inherits the
    monkeypatched module, so this runs there)."""
    import os

    with open(os.environ[_PIDS], "a", encoding="utf-8") as f:
        f.write(f"{os.getpid()}\n")
    return _REAL_CHECK_CHUNK(gates, chunk)


_REAL_CHECK_CHUNK = check_commands._check_chunk


def test_jsonl_workers_write_the_same_lines_in_the_same_order(app, runner, tmp_path, monkeypatch):
    """`--workers 2` checks the lines in two more processes and writes exactly what one
    process writes: every line in input order, malformed and blank lines as before,
    the same exit code and the same closing count."""
    lines, _ = generated_pairs(700)
    raw = [json.dumps(line) for line in lines]
    raw[3], raw[400] = "{not json", "   "
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(raw) + "\n", encoding="utf-8")
    pids = tmp_path / "pids"
    monkeypatch.setenv(_PIDS, str(pids))
    monkeypatch.setattr(check_commands, "_check_chunk", _recording_chunk)
    one = runner.invoke(app, ["check", "--jsonl", str(path), "--workers", "1"])
    assert set(pids.read_text().split()) == {str(os.getpid())}
    pids.unlink()
    two = runner.invoke(app, ["check", "--jsonl", str(path), "--workers", "2"])
    workers = set(pids.read_text().split())
    assert str(os.getpid()) not in workers and len(workers) == 2
    assert (two.exit_code, two.stdout) == (one.exit_code, one.stdout)
    assert one.exit_code == 1
    assert len(two.stdout.splitlines()) == 699  # the blank line is skipped
    assert [json.loads(x)["id"] for x in two.stdout.splitlines()][:5] == [
        "pair-0",
        1,
        "pair-2",
        None,
        "pair-4",
    ]
    assert "checked 699:" in two.stderr and "1 malformed" in two.stderr


def test_jsonl_a_few_lines_stay_in_one_process(app, runner, tmp_path, monkeypatch):
    """Starting processes costs more than checking a handful of lines: they are
    checked in this process whatever `--workers` says."""
    lines, _ = generated_pairs(20)
    pids = tmp_path / "pids"
    monkeypatch.setenv(_PIDS, str(pids))
    monkeypatch.setattr(check_commands, "_check_chunk", _recording_chunk)
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    result = runner.invoke(app, ["check", "--jsonl", "-", "--workers", "4"], input=stdin)
    assert len(result.stdout.splitlines()) == 20
    assert set(pids.read_text().split()) == {str(os.getpid())}


@pytest.mark.parametrize(
    "args, message",
    [
        (["check", "--jsonl", "-", "--workers", "0"], "--workers must be at least 1"),
        (["check", "s.txt", "d.txt", "--url", URL, "--workers", "2"], "--workers goes with"),
    ],
)
def test_jsonl_workers_bad_usage_is_one_line(app, runner, args, message):
    result = runner.invoke(app, args, input="")
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert result.stderr.count("\n") == 1


# --- the item's language on a --jsonl line ------------------------------------------------------

# A French report (invented): "1,250 tonnes" is one and a quarter tonnes. The draft is too
# short for the detector to tell its language, so without one given its 1,250 reads as
# English (1250) and is refused; with the item's language it reads as the source does.
FR_SOURCE = (
    "Le port de Vaulmont a reçu 1,250 tonnes de sable pour la digue, selon la capitainerie, "
    "qui attend une deuxième livraison avant la fin du mois. " * 12
)
FR_LINE = {"source": FR_SOURCE, "summary": "Vaulmont : 1,250 tonnes de sable", "url": URL}


def _jsonl(app, runner, lines: list[dict]) -> tuple[int, list[dict], str]:
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    result = runner.invoke(app, ["check", "--jsonl", "-"], input=stdin)
    return result.exit_code, [json.loads(r) for r in result.stdout.splitlines()], result.stderr


def test_jsonl_language_is_the_items_and_reads_the_draft(app, runner):
    lines = [
        FR_LINE | {"id": "fr", "language": "fr"},
        FR_LINE | {"id": "fr-FR", "language": "fr-FR"},  # a BCP 47 tag, as feeds write them
        FR_LINE | {"id": "none", "language": None},  # null: detected, as if absent
        FR_LINE | {"id": "absent"},
    ]
    code, docs, _ = _jsonl(app, runner, lines)
    assert code == 1
    assert {d["id"]: d["passed"] for d in docs} == {
        "fr": True,
        "fr-FR": True,
        "none": False,
        "absent": False,
    }
    failed = {d["id"]: [v["gate"] for v in d["verdicts"] if not v["passed"]] for d in docs}
    assert failed["none"] == failed["absent"] == ["numbers_grounded"]


def test_jsonl_language_another_language_is_detected(app, runner):
    """A real language the gates do not read (Portuguese) is accepted and detected, as
    the pipeline does with such an item."""
    code, docs, _ = _jsonl(app, runner, [FR_LINE | {"id": "pt", "language": "pt-BR"}])
    assert (code, docs[0]["passed"], "error" in docs[0]) == (1, False, False)


def test_jsonl_language_three_letter_codes_of_the_gates_languages(app, runner):
    """ISO 639-2 (bibliographic and terminology) and 639-3 codes, as an item's stored
    `items.language` may carry them, read like the two-letter code; a three-letter code
    of no language stays a malformed line."""
    codes = ("fra", "fre", "FRA", "fre-CA")
    lines = [FR_LINE | {"id": c, "language": c} for c in (*codes, "qqq")]
    code, docs, _ = _jsonl(app, runner, lines)
    assert code == 1
    assert {d["id"]: d["passed"] for d in docs} == dict.fromkeys(codes, True) | {"qqq": False}
    assert [d["id"] for d in docs if "error" in d] == ["qqq"]


def test_jsonl_unknown_language_is_one_clear_line(app, runner):
    lines = [
        FR_LINE | {"id": "ok", "language": "fr"},
        FR_LINE | {"id": "klingon", "language": "klingon"},
        FR_LINE | {"id": "made-up", "language": "qq"},
        FR_LINE | {"id": "number", "language": 33},
    ]
    code, docs, stderr = _jsonl(app, runner, lines)
    assert code == 1  # a malformed line, as documented (docs/gates.md)
    assert docs[0] == docs[0] | {"id": "ok", "passed": True}
    bad = {d["id"]: d for d in docs[1:]}
    assert set(bad) == {"klingon", "made-up", "number"}
    for item_id, line in (("klingon", 3), ("made-up", 4), ("number", 5)):
        d = bad[item_id]
        assert (d["passed"], d["verdicts"], d["line"]) == (False, [], line - 1)
        assert "\n" not in d["error"]
    assert bad["klingon"]["error"] == (
        'line 2: "language" "klingon" is not a language code '
        '(an ISO 639-1 code such as "fr" or "de-AT", or null to detect it)'
    )
    assert '"language" "qq" is not a language code' in bad["made-up"]["error"]
    assert bad["number"]["error"] == 'line 4: "language" must be a string or null'
    assert "checked 4: 1 passed, 0 failed, 3 malformed" in stderr


def test_jsonl_workers_get_the_gates_once_not_with_every_chunk(app, runner, tmp_path, monkeypatch):
    """A worker is forked with the gates and their modes: only the lines travel to it,
    so the parent pickles no `Gates` at all (it pickled them with every chunk)."""
    lines, _ = generated_pairs(1100)
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    pickled = []

    def reduce_ex(self, protocol):
        pickled.append(protocol)
        return object.__reduce_ex__(self, protocol)

    monkeypatch.setattr(check_commands.Gates, "__reduce_ex__", reduce_ex, raising=False)
    result = runner.invoke(app, ["check", "--jsonl", str(path), "--workers", "2"])
    assert len(result.stdout.splitlines()) == 1100
    assert "checked 1100:" in result.stderr
    assert pickled == []


def _failing_chunk(gates, chunk):
    """`check._check_chunk` that fails on the chunk holding line 600 (in a worker)."""
    if any(number == 600 for number, _ in chunk):
        raise ValueError("a gate broke on line 600")
    return _REAL_CHECK_CHUNK(gates, chunk)


def test_jsonl_a_worker_s_error_stops_the_run_and_every_worker(app, runner, tmp_path, monkeypatch):
    """An error in a worker is raised in the parent, as checking in one process would
    raise it, and no worker is left behind."""
    import multiprocessing

    lines, _ = generated_pairs(1100)
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    monkeypatch.setattr(check_commands, "_check_chunk", _failing_chunk)
    result = runner.invoke(app, ["check", "--jsonl", str(path), "--workers", "2"])
    assert isinstance(result.exception, ValueError)
    assert str(result.exception) == "a gate broke on line 600"
    assert multiprocessing.active_children() == []


def test_jsonl_workers_finish_when_a_chunk_is_larger_than_its_pipe(monkeypatch):
    """A chunk, or its results, larger than the pipe it goes through (long articles; a
    system whose pipes cannot be widened): the parent never waits on a send while the
    worker waits for it to read its results. Pipes of one page (4 KiB) here; the run
    must end, with what one process writes."""
    import io
    import threading

    lines, _ = generated_pairs(1100)
    raw = [json.dumps(line) for line in lines]
    gates = check_commands.Gates(dict(DEFAULT_MODES), 150)
    one = io.StringIO()
    check_commands.check_jsonl(raw, one, gates, 1)
    monkeypatch.setattr(check_commands, "_PIPE_SIZE", 4096)
    two = io.StringIO()
    run = threading.Thread(
        target=check_commands.check_jsonl, args=(raw, two, gates, 2), daemon=True
    )
    run.start()
    run.join(timeout=120)  # generous: the run takes about a second
    assert not run.is_alive(), "--workers 2 hung on pipes smaller than a chunk"
    assert two.getvalue() == one.getvalue()


def test_jsonl_workers_are_forked_before_any_thread_of_the_parent_starts(tmp_path, monkeypatch):
    """The sending threads start once every worker is forked: a fork copies only the
    thread that calls it, and a lock another thread held would stay held in the child
    (Python 3.12 warns of it: "use of fork() may lead to deadlocks in the child")."""
    import io
    import multiprocessing
    import threading

    context = multiprocessing.get_context("fork")
    real_start = type(context.Process()).start
    threads_at_fork = []

    def start(self):
        threads_at_fork.append(threading.active_count())
        return real_start(self)

    monkeypatch.setattr(type(context.Process()), "start", start)
    lines, _ = generated_pairs(1100)
    raw = [json.dumps(line) for line in lines]
    before = threading.active_count()
    out = io.StringIO()
    check_commands.check_jsonl(raw, out, check_commands.Gates(dict(DEFAULT_MODES), 150), 3)
    assert len(out.getvalue().splitlines()) == 1100
    assert threads_at_fork == [before] * 3
