"""`copydesk eval` with a key: the model checks through the real SDK against a
loopback server that answers like the API (tests/anthropic_fake.py), with
every call in the ledger; `--runs N` spread and cost; `--calibrate`; `--compare`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import Session, func, select
from typer.testing import CliRunner

from copydesk.cli import app
from copydesk.evaluation.pack import load_pack
from store.db import open_store
from store.models import ModelCall
from tests import anthropic_fake as fake_api
from tests.anthropic_fake import FakeAnthropic, Reply

ROOT = Path(__file__).resolve().parent.parent
FULL = ROOT / "evals" / "pack"
ARTICLES = ("a07_hollin_moor_wind", "a09_vellmouth_crime")  # a pack of two keeps this quick


def small_pack(target: Path) -> Path:
    """A valid pack of two of the real articles, with their scripted replies and
    the counts they hold."""
    shutil.copytree(FULL, target)
    files = [f"articles/{name}.toml" for name in ARTICLES]
    scripted = [f"scripted/{name[:3]}.json" for name in ARTICLES]
    articles = [tomllib.loads((target / f).read_text(encoding="utf-8")) for f in files]
    keys = Counter(s["key"] for a in articles for s in a["summary"])
    replies = sum(len(json.loads((target / f).read_text(encoding="utf-8"))) for f in scripted)
    lines = ['name = "copydesk-eval-small"', "version = 1"]
    lines += [f"articles = {json.dumps(files)}", f"scripted = {json.dumps(scripted)}"]
    lines += ["[counts]", f"articles = {len(articles)}", f"summaries = {keys.total()}"]
    lines += [f"clean = {keys.pop('clean')}", f"scripted = {replies}"]
    lines += [f"hard_cases = {sum(len(a.get('hard_case', [])) for a in articles)}"]
    designed = tomllib.loads((FULL / "manifest.toml").read_text())["designed_gates"]
    lines += ["[designed_gates]"] + [f'{k} = "{g}"' for k, g in designed.items()]
    lines += ["[counts.kinds]"] + [f"{k} = {keys.get(k, 0)}" for k in designed]
    (target / "manifest.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


PACK_DIR = small_pack(Path(tempfile.mkdtemp(prefix="copydesk-eval-pack-")) / "pack")
PACK = load_pack(PACK_DIR)
KEY = "sk-ant-api03-EVALKEY-a1Bb2Cc3Dd4Ee5"
UNSTABLE = "a07-s06"  # judged faithful on the first call, flagged on the second


def _first_sentence(text: str) -> str:
    return text.strip().split(". ")[0]


def responder() -> Any:
    """Answers each check request from the pack: a summary's scripted reply; for a
    clean summary with an appended sentence, that sentence flagged; for a hard
    case, a judgement that it is faithful."""
    by_text = {s.text: (s, PACK.scripted.get(s.id)) for s in PACK.summaries}
    hard = {h.text: h for a in PACK.articles for h in a.hard_cases}
    calls: Counter[str] = Counter()

    def faithful(sentence: str, passage: str, *errors: str) -> dict[str, Any]:
        return {
            "sentence": sentence,
            "errors": list(errors),
            "wrong_fact": False,
            "rewrite": sentence,
            "reader_draft": "r",
            "reader_rewrite": "r",
            "material": bool(errors),
            "passage": passage,
        }

    def respond(request: Any) -> Reply:
        draft = fake_api.draft_text(request)
        calls[draft] += 1
        if draft in by_text:
            summary, scripted = by_text[draft]
            if scripted is None:
                return fake_api.text_reply("no check today")
            if not isinstance(scripted, dict):
                return fake_api.text_reply(str(scripted))
            if summary.id == UNSTABLE and calls[draft] > 1:
                scripted = json.loads(json.dumps(scripted))
                scripted["sentences"][0]["errors"] = ["scope"]
                scripted["sentences"][0]["material"] = True
            return fake_api.check_reply(scripted)
        if draft in hard:
            article = PACK.article(hard[draft].article)
            passage = _first_sentence(article.text)
            return fake_api.check_reply({"claims": [], "sentences": [faithful(draft, passage)]})
        for text, (summary, scripted) in by_text.items():
            if summary.clean and draft.startswith(text):
                extra = draft[len(text) :].strip()
                passage = _first_sentence(PACK.article(summary.article).text)
                reply = json.loads(json.dumps(scripted))
                reply["sentences"].append(faithful(extra, passage, "factual"))
                return fake_api.check_reply(reply)
        return fake_api.text_reply("unexpected draft")

    return respond


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    db = f"sqlite:///{tmp_path / 'eval.db'}"
    config = tmp_path / "config.toml"
    config.write_text(
        f'[database]\nurl = "{db}"\n[checks]\nmax_retries = 0\n'
        '[summarise.prices."claude-haiku-4-5"]\ninput = 1.0\noutput = 5.0\n'
        "cache_write = 1.25\ncache_read = 0.1\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COPYDESK_CONFIG", str(config))
    # The ledger's database is made as an operator makes it (only init creates one).
    assert CliRunner().invoke(app, ["init"]).exit_code == 0
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    fake = FakeAnthropic(responder=responder(), api_key=KEY)
    with fake.serve() as base_url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
        yield fake, db


def _eval(*args: str):
    return CliRunner().invoke(
        app, ["eval", "--json", "--pack", str(PACK_DIR), *args], catch_exceptions=False
    )


def test_runs_report_spread_and_the_ledger_cost(live, tmp_path):
    fake, db = live
    result = _eval("--runs", "2")
    facts = json.loads(result.stdout)
    assert facts["run"]["model"] == "claude-haiku-4-5" and facts["run"]["scripted"] is False
    assert facts["run"]["model_checks"].startswith("Model checks: claude-haiku-4-5, live")
    assert facts["runs"] == 2
    # The unstable summary: missed on run 1, caught on run 2.
    spread = facts["spread"]["kinds"]["dropped_limiter"]["caught"]
    assert spread == {"min": 0, "median": 0.5, "max": 1}
    assert facts["kinds"]["reversed_claim"]["caught"] == 1
    # Every call is in the ledger, and the cost in the facts is the ledger's.
    engine = open_store(db)
    with Session(engine) as s:
        rows = s.exec(select(func.count(ModelCall.id))).one()
        ledger_cost = s.exec(select(func.sum(ModelCall.cost_usd))).one()
    assert rows == len(fake.message_requests) == 2 * len(PACK.summaries)
    assert facts["run"]["ledger"]["calls"] == rows == facts["cost"]["calls"]
    assert facts["cost"]["cost_usd"] == facts["run"]["ledger"]["cost_usd"] == round(ledger_cost, 6)
    assert facts["cost"]["cost_usd"] > 0
    folder = tmp_path / "eval-runs" / facts["run"]["run_id"]
    log = [json.loads(x) for x in (folder / "run.jsonl").read_text().splitlines()[1:]]
    ids = [i for line in log for i in line["ledger_ids"]]
    assert len(ids) == len(set(ids)) == rows
    # The independent verifier recomputes the spread and the cost from the log.
    done = subprocess.run(
        [sys.executable, str(ROOT / "evals" / "verify.py"), str(folder), "--pack", str(PACK_DIR)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_calibrate_reports_four_dimensions_and_compare_shows_the_change(live, tmp_path):
    result = _eval("--calibrate")
    body = json.loads(result.stdout)
    cal = body["calibration"]
    clean = sum(s.clean for s in PACK.summaries)
    assert cal["clear_cut"] == {
        "clean": clean,
        "clean_passed": clean,
        "fabricated": clean,
        "fabricated_flagged": clean,
        "accuracy": 1.0,
        "fabricated_not_flagged": [],
    }
    hard = cal["hard_cases"]
    editors = [h.verdict for a in PACK.articles for h in a.hard_cases]
    assert hard["cases"] == len(editors) and hard["agree"] == editors.count("faithful")
    negatives = {f["id"]: f["outcome"] for f in cal["false_negatives"]}
    assert negatives == {"a07-s06": "missed", "a09-s06": "wrong_reason"}
    assert cal["stability"]["runs"] == 2
    assert cal["stability"]["identical"] == len(PACK.summaries) - 1
    run_a = body["run"]["run_id"]
    stored = json.loads((tmp_path / "eval-runs" / run_a / "calibration.json").read_text())
    assert stored == cal

    # Another prompt or model version is another run; --compare shows what changed.
    (tmp_path / "config.toml").write_text(
        (tmp_path / "config.toml").read_text() + '[gates.modes]\nclaims_supported = "off"\n'
    )
    run_b = json.loads(_eval("--calibrate").stdout)["run"]["run_id"]
    assert run_b != run_a
    compared = CliRunner().invoke(app, ["eval", "--compare", run_a, run_b, "--json"])
    changes = json.loads(compared.stdout)["changes"]
    assert any(c["section"] == "gates" and c["name"] == "claims_supported" for c in changes)
    calibration = [c for c in changes if c["section"] == "calibration"]
    assert all(c["a"] != c["b"] for c in calibration)
