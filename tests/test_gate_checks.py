"""claims_supported and faithfulness: the model proposes, these pure gates dispose."""

from __future__ import annotations

import pytest

from guards.checks import (
    ERROR_KINDS,
    CheckReply,
    Claim,
    SentenceJudgement,
    check_state,
    claims_supported,
    faithfulness,
    not_run,
)
from guards.registry import GateResult, run_checks

# An invented article.
SOURCE = (
    "Kessmoor council has not promised funding for the Lindqvist ferry beyond 2027, "
    "its treasurer, Ada Pellow, said on Tuesday.\n\n"
    "The ferry carried 41,200 passengers last year, up from 38,950 in 2024. Pellow said "
    "ticket prices could rise by 12% if the regional grant of \u00a31.4m is not renewed.\n\n"
    "\u201cWe are asking the region, not telling it,\u201d said the harbour master, "
    "Joss Amberley. A survey of commuters in the east ward found that 63 of 80 "
    "respondents used the ferry daily. The council will vote on the budget in March."
)
DRAFT = (
    "Kessmoor ferry funding unsure after 2027\n\n"
    "Kessmoor council has not promised funding for the Lindqvist ferry beyond 2027. "
    "Ticket prices could rise by 12% if a \u00a31.4m grant is not renewed."
)

P_FUNDING = "Kessmoor council has not promised funding for the Lindqvist ferry beyond 2027"
P_PRICES = "ticket prices could rise by 12% if the regional grant of \u00a31.4m is not renewed"


def claim(text: str, passage: str | None, supports: bool = True) -> Claim:
    return Claim(text, passage, supports)


CLAIM_CASES = [
    # (name, claim, expected outcome, rule)
    (
        "verbatim",
        claim(
            "The ferry carried 41,200 passengers last year.",
            "The ferry carried 41,200 passengers last year",
        ),
        "supported",
        None,
    ),
    (
        "case, spaces, curly quotes",
        claim(
            "The harbour master said the council is asking.",
            "\u201cwe are   asking the region, NOT telling it,\u201d said the harbour master",
        ),
        "supported",
        None,
    ),
    (
        "straight quotes for curly",
        claim(
            "Amberley said they are asking.",
            '"We are asking the region, not telling it," said the harbour master',
        ),
        "supported",
        None,
    ),
    (
        "invisible characters",
        claim(
            "The ferry carried 41,200 passengers.",
            "The fer\u00adry car\u200bried 41,200 passengers",
        ),
        "supported",
        None,
    ),
    (
        "grouping style of a number",
        claim("It carried 41 200 passengers.", "The ferry carried 41,200 passengers last year"),
        "supported",
        None,
    ),
    ("no passage", claim("The ferry is popular.", None), "not supported", "no passage"),
    ("blank passage", claim("The ferry is popular.", "   "), "not supported", "no passage"),
    ("empty claim", claim("  ", P_FUNDING), "not supported", "empty claim"),
    (
        "invented passage",
        claim(
            "The ferry won the Coastal Link award.", "The ferry won the Coastal Link award in 2025"
        ),
        "not supported",
        "passage not in the source",
    ),
    (
        "one word changed in the passage",
        claim("The ferry carried 41,200 passengers.", "The ferry carried 41,200 people last year"),
        "not supported",
        "passage not in the source",
    ),
    (
        "ellipsis stitching two places",
        claim("Pellow said 63 passengers.", "Pellow said ... 63"),
        "not supported",
        "passage not in the source",
    ),
    (
        "part of a word",
        claim("Kessmoor council.", "Kessmoor coun"),
        "not supported",
        "passage not in the source",
    ),
    (
        "changed number",
        claim(
            "The ferry carried 42,100 passengers last year.",
            "The ferry carried 41,200 passengers last year",
        ),
        "not supported",
        "number not in the passage",
    ),
    (
        "number elsewhere in the source",
        claim(
            "The ferry carried 41,200 passengers, up from 38,950.",
            "The ferry carried 41,200 passengers last year",
        ),
        "not supported",
        "number not in the passage",
    ),
    (
        "digits of another script",
        claim(
            "The ferry carried \u0664\u0661,\u0662\u0660\u0660 passengers.",
            "The ferry carried 41,200 passengers last year",
        ),
        "supported",
        None,
    ),
    (
        "substring of a number",
        claim("It carried 1,200 passengers.", "The ferry carried 41,200 passengers last year"),
        "not supported",
        "number not in the passage",
    ),
    (
        "scale changed",
        claim("A grant of \u00a314m.", P_PRICES),
        "not supported",
        "number not in the passage",
    ),
    (
        "model says it does not support",
        claim("The council has guaranteed funding through 2027.", P_FUNDING, supports=False),
        "not supported",
        "the model says the passage does not support it",
    ),
]


@pytest.mark.parametrize(
    ("c", "outcome", "rule"), [case[1:] for case in CLAIM_CASES], ids=[c[0] for c in CLAIM_CASES]
)
def test_one_claim(c: Claim, outcome: str, rule: str | None) -> None:
    verdict = claims_supported(SOURCE, c.claim, [c])  # a draft of that one claim
    [entry] = verdict.evidence
    assert (entry["outcome"], entry["rule"]) == (outcome, rule)
    assert verdict.passed is (outcome == "supported")
    if outcome == "supported":
        start, end = entry["source_span"]
        assert SOURCE[start:end].replace("\u00ad", "").replace("\u200b", "")
    else:
        assert rule in verdict.reason


def test_supported_claim_points_at_its_passage() -> None:
    verdict = claims_supported(SOURCE, DRAFT, [claim("Prices could rise by 12%.", P_PRICES)])
    start, end = verdict.evidence[0]["source_span"]
    assert (
        SOURCE[start:end]
        == "ticket prices could rise by 12% if the regional grant of \u00a31.4m is not renewed"
    )


def test_zero_claims_from_a_non_empty_draft_fails() -> None:
    verdict = claims_supported(SOURCE, DRAFT, [])
    assert not verdict.passed
    assert "no claims" in verdict.reason


def test_one_bad_claim_among_good_ones_fails_and_is_named() -> None:
    claims = [
        claim("Funding is not promised beyond 2027.", P_FUNDING),
        claim("The ferry won an award.", "The ferry won an award"),
        claim("Prices could rise by 12%.", P_PRICES),
    ]
    verdict = claims_supported(SOURCE, DRAFT, claims)
    assert not verdict.passed
    assert [e["outcome"] for e in verdict.evidence] == ["supported", "not supported", "supported"]
    assert verdict.reason.startswith("1 of 3 claims not supported")


# --------------------------------------------------------------------------- faithfulness

HEADLINE = "Kessmoor ferry funding unsure after 2027"
S1 = "Kessmoor council has not promised funding for the Lindqvist ferry beyond 2027."
S2 = "Ticket prices could rise by 12% if a \u00a31.4m grant is not renewed."


def judge(
    sentence: str,
    passage: str | None,
    *errors: str,
    wrong_fact: bool = False,
    material: bool = False,
) -> SentenceJudgement:
    return SentenceJudgement(
        sentence=sentence,
        errors=tuple(errors),
        wrong_fact=wrong_fact,
        rewrite=sentence if not errors else f"(faithful) {sentence}",
        reader_draft="what the draft says",
        reader_rewrite="what the source says" if material else "what the draft says",
        material=material,
        passage=passage,
    )


FAITHFUL_SET = [judge(HEADLINE, P_FUNDING), judge(S1, P_FUNDING), judge(S2, P_PRICES)]


def test_every_sentence_verified_faithful_passes() -> None:
    verdict = faithfulness(SOURCE, DRAFT, FAITHFUL_SET)
    assert verdict.passed, verdict.reason
    assert [e["outcome"] for e in verdict.evidence["sentences"]] == ["faithful"] * 3


def test_verified_wrong_fact_fails_hard() -> None:
    draft = f"{HEADLINE}\n\nKessmoor council has guaranteed funding for the ferry through 2027."
    wrong = judge(
        "Kessmoor council has guaranteed funding for the ferry through 2027.",
        P_FUNDING,
        "factual",
        wrong_fact=True,
    )
    verdict = faithfulness(SOURCE, draft, [judge(HEADLINE, P_FUNDING), wrong])
    assert not verdict.passed and not verdict.flag_only
    assert GateResult(verdict, "discard").hard_fail
    assert GateResult(verdict, "flag").flagged and not GateResult(verdict, "flag").hard_fail
    assert verdict.evidence["sentences"][1]["material"] is True  # a wrong fact always is
    assert "contradicted" in verdict.reason


def test_wrong_fact_with_an_invented_passage_is_not_verified_never_faithful() -> None:
    wrong = judge(S1, "The council pledged the ferry money until 2030", "factual", wrong_fact=True)
    verdict = faithfulness(SOURCE, DRAFT, [judge(HEADLINE, P_FUNDING), wrong, judge(S2, P_PRICES)])
    assert not verdict.passed and verdict.flag_only
    assert verdict.evidence["sentences"][1]["outcome"] == "not verified"
    assert not GateResult(verdict, "discard").hard_fail
    assert GateResult(verdict, "discard").flagged
    assert GateResult(verdict, "discard").stored_mode == "flag"


def test_faithful_judgement_without_a_passage_is_not_verified() -> None:
    verdict = faithfulness(
        SOURCE, DRAFT, [judge(HEADLINE, P_FUNDING), judge(S1, None), judge(S2, P_PRICES)]
    )
    assert not verdict.passed
    why = verdict.evidence["sentences"][1]["why"]
    assert why.startswith("not verified: the checking model quoted no passage of the source")
    assert why in verdict.reason


@pytest.mark.parametrize("kind", ERROR_KINDS)
def test_each_material_kind_flags_with_kind_passage_and_rewrite(kind: str) -> None:
    flagged = judge(S2, P_PRICES, kind, material=True)
    verdict = faithfulness(
        SOURCE, DRAFT, [judge(HEADLINE, P_FUNDING), judge(S1, P_FUNDING), flagged]
    )
    assert not verdict.passed and verdict.flag_only
    assert kind in verdict.reason
    entry = verdict.evidence["sentences"][2]
    assert (entry["outcome"], entry["errors"], entry["passage"]) == (
        "material error",
        [kind],
        P_PRICES,
    )
    assert entry["rewrite"].startswith("(faithful)")
    result = GateResult(verdict, "discard")
    assert result.flagged and not result.hard_fail


def test_a_named_error_the_model_calls_immaterial_is_still_a_flag() -> None:
    """Before: `factual` with material false passed the gate silently."""
    for kind in ("framing", "factual"):
        minor = judge(S2, P_PRICES, kind, material=False)
        verdict = faithfulness(
            SOURCE, DRAFT, [judge(HEADLINE, P_FUNDING), judge(S1, P_FUNDING), minor]
        )
        assert not verdict.passed and verdict.flag_only
        assert verdict.evidence["sentences"][2]["outcome"] == "minor error"
        assert kind in verdict.reason


def test_material_without_a_kind_is_a_flag_that_says_so() -> None:
    """Before: material true with no kind was a "minor error" and passed."""
    odd = judge(S2, P_PRICES, material=True)
    verdict = faithfulness(SOURCE, DRAFT, [judge(HEADLINE, P_FUNDING), judge(S1, P_FUNDING), odd])
    assert not verdict.passed and verdict.flag_only
    assert "kind not named" in verdict.reason
    assert verdict.evidence["sentences"][2]["outcome"] == "material error"


def test_a_whole_article_passage_verifies_nothing() -> None:
    judged = judge(S2, SOURCE)
    verdict = faithfulness(
        SOURCE, DRAFT, [judge(HEADLINE, P_FUNDING), judge(S1, P_FUNDING), judged]
    )
    assert not verdict.passed
    assert verdict.evidence["sentences"][2]["outcome"] == "not verified"


def test_unknown_error_kind_is_not_counted() -> None:
    odd = judge(S2, P_PRICES, "vibes", material=True)
    verdict = faithfulness(SOURCE, DRAFT, [judge(HEADLINE, P_FUNDING), judge(S1, P_FUNDING), odd])
    assert verdict.evidence["sentences"][2]["errors"] == []


def test_sentence_not_in_the_draft_is_void_and_the_gap_shows() -> None:
    elsewhere = judge("The ferry is safe.", P_FUNDING)
    verdict = faithfulness(
        SOURCE, DRAFT, [judge(HEADLINE, P_FUNDING), judge(S1, P_FUNDING), elsewhere]
    )
    assert not verdict.passed
    assert verdict.evidence["sentences"][2]["why"] == "the sentence is not in the draft"
    assert verdict.evidence["not_judged"] == [
        "Ticket prices could rise by 12 if a 1 4m grant is not renewed"
    ]


def test_unjudged_sentence_is_not_a_pass() -> None:
    verdict = faithfulness(SOURCE, DRAFT, [judge(HEADLINE, P_FUNDING), judge(S1, P_FUNDING)])
    assert not verdict.passed and "not judged" in verdict.reason


def test_no_judgements_for_a_non_empty_draft_fails() -> None:
    verdict = faithfulness(SOURCE, DRAFT, [])
    assert not verdict.passed and "judged no sentence" in verdict.reason


# --------------------------------------------------------------------------- registry


def test_checks_without_a_reply_never_pass_and_never_discard() -> None:
    results = run_checks(SOURCE, DRAFT, None, modes={}, why_not="no model")
    assert [r.gate for r in results] == ["claims_supported", "faithfulness"]
    for r in results:
        assert not r.verdict.passed and r.not_run
        assert not r.hard_fail and r.flagged
        assert r.stored_mode == "flag"
        assert r.verdict.reason == "not run (no model)"
        assert r.to_dict()["ran"] is False


def test_require_stores_not_run_as_blocking() -> None:
    results = run_checks(
        SOURCE, DRAFT, None, modes={}, why_not="reply did not parse", state="failed", require=True
    )
    assert {r.stored_mode for r in results} == {"discard"}
    assert not any(r.hard_fail for r in results)  # blocks approval, does not discard
    assert results[0].verdict.reason == "failed (reply did not parse)"


def test_modes_apply_and_off_skips() -> None:
    reply = CheckReply((claim("Made up.", "Made up entirely"),), tuple(FAITHFUL_SET))
    results = run_checks(
        SOURCE, DRAFT, reply, modes={"claims_supported": "discard", "faithfulness": "off"}
    )
    [claims] = results
    assert claims.hard_fail
    default = run_checks(SOURCE, DRAFT, reply, modes={})
    assert default[0].flagged and not default[0].hard_fail  # claims_supported defaults to flag
    assert default[1].verdict.passed


def test_a_sentence_the_draft_repeats_is_covered_in_order() -> None:
    draft = f"{S1}\n\n{S1} {S2}"
    judged = [judge(S1, P_FUNDING), judge(S1, P_FUNDING), judge(S2, P_PRICES)]
    verdict = faithfulness(SOURCE, draft, judged)
    assert verdict.passed, verdict.reason
    spans = [e["draft_span"] for e in verdict.evidence["sentences"]]
    assert spans[0][0] == 0 and spans[1][0] == len(S1) + 2


def test_check_state_is_the_one_reading_of_a_not_run_verdict() -> None:
    failed = not_run("faithfulness", "model API timed out", "failed", transient=True)
    assert check_state(failed.passed, failed.evidence) == "failed"
    assert failed.evidence["transient"] is True
    assert check_state(False, not_run("claims_supported", "no model").evidence) == "not run"
    # A check that ran, or a gate that is not a model check, ran: whatever it says.
    assert check_state(True, {"state": "not run"}) == "ran"  # a pass is never "not run"
    assert check_state(False, [{"claim": "x"}]) == "ran"
    assert check_state(False, {"state": "not run at all"}) == "ran"
    assert check_state(False, None) == "ran"


# --------------------------------------------------------------------------- valid but meaningless


GOOD_CLAIMS = [
    claim("Kessmoor ferry funding is unsure after 2027.", P_FUNDING),
    claim("Kessmoor council has not promised ferry funding beyond 2027.", P_FUNDING),
    claim("Ticket prices could rise by 12% if a £1.4m grant is not renewed.", P_PRICES),
]


def test_claims_covering_every_sentence_pass() -> None:
    verdict = claims_supported(SOURCE, DRAFT, GOOD_CLAIMS)
    assert verdict.passed, verdict.reason


def test_every_claim_citing_the_whole_article_is_not_supported() -> None:
    """Before: the whole article as passage made any claim with its numbers supported."""
    claims = [claim(c.claim, SOURCE) for c in GOOD_CLAIMS]
    verdict = claims_supported(SOURCE, DRAFT, claims)
    assert not verdict.passed
    assert {e["rule"] for e in verdict.evidence} == {"passage not bounded"}


def test_a_one_word_passage_supports_nothing() -> None:
    claims = [*GOOD_CLAIMS[:2], claim(GOOD_CLAIMS[2].claim.replace("12%", "more"), "the")]
    verdict = claims_supported(SOURCE, DRAFT, claims)
    assert not verdict.passed
    assert verdict.evidence[2]["rule"] == "passage shares no content with the claim"


def test_claims_about_another_text_than_the_draft_fail() -> None:
    """The draft says the council rejected the plan; the claims say it approved it."""
    source = (
        "Members of Orrin council rejected the harbour plan on Monday by nine votes to four. "
        "The plan would have moved the fish market to the north quay."
    )
    draft = "Orrin council rejects harbour plan\n\nOrrin council rejected the harbour plan."
    claims = [
        claim(
            "Orrin council approved the harbour plan.",
            "Members of Orrin council rejected the harbour plan",
        ),
    ]
    verdict = claims_supported(source, draft, claims)
    assert not verdict.passed
    assert verdict.evidence[0]["rule"] == "claim not in the draft"


def test_a_draft_sentence_no_claim_covers_fails() -> None:
    verdict = claims_supported(SOURCE, DRAFT, GOOD_CLAIMS[:2])
    assert not verdict.passed
    assert "no claim covers" in verdict.reason and "Ticket prices" in verdict.reason


def test_more_than_one_call_of_a_tool_is_named() -> None:
    from guards.checks import single_call

    assert single_call(["record_checks"], "record_checks") is None
    assert single_call(["write_summary", "record_checks"], "record_checks") is None
    why = single_call(["record_checks", "record_checks"], "record_checks")
    assert why and "2 times" in why


def test_claims_read_each_draft_sentence_once_not_once_per_claim(monkeypatch) -> None:
    """Issue 24 (CPU per article in the model path): which draft sentences say a claim
    is asked of every claim, but each sentence's words, and the draft's, are read
    once per draft. Counted in readings (exact), not time. Before: three readings
    per claim and sentence (the claim, the sentence, the whole draft again), about
    1.8 ms of the model path's ~22 ms per article."""
    import guards.checks as checks

    read = [0]
    inner = checks.content_words

    def counted(text: str) -> set[str]:
        read[0] += 1
        return inner(text)

    monkeypatch.setattr(checks, "content_words", counted)
    facts = [
        "The Orrin weir gauge read 41 centimetres at dawn",
        "Tamsin Vell keeps the lock at Hobble Reach",
        "Barges paid 12 crowns toll in April",
        "Kingfishers nested under Marl Bridge",
        "Dredgers cleared 300 tonnes of silt",
        "Volunteers repainted Saltcote ferry sheds",
        "Anglers counted nine grayling near Fenwick",
        "Floodgates opened twice during storms",
    ]
    source = " ".join(f"{text}, the keeper said." for text in facts)
    draft = "\n".join(f"{text}." for text in facts)
    claims = [claim(text, text) for text in facts]
    verdict = claims_supported(source, draft, claims)
    assert verdict.passed, verdict.reason
    assert [e["draft_sentences"] for e in verdict.evidence] == [[i] for i in range(8)]
    # A reading per claim and per passage, one per sentence, one of the draft.
    assert read[0] <= 2 * len(claims) + len(facts) + 1, read[0]


def test_a_word_is_stemmed_once_however_many_claims_read_it() -> None:
    """Issue 24, session 15: the claims' and passages' words are mostly the draft's
    and the source's, read again for each claim; each word's stem is found once a
    process and looked up after (about a third of `content_words`, 25 readings an
    article). Counted in stemmings (exact), not time."""
    import guards.checks as checks

    checks._stem.cache_clear()
    text = "Barges crossing Marl Reach paid tolls; barges crossing Hobble Reach paid tolls"
    first = checks.content_words(text)
    again = checks.content_words(text.upper())
    assert first == again == {"barg", "cross", "marl", "reach", "paid", "toll", "hobble"}
    assert checks._stem.cache_info().misses == len(first)
