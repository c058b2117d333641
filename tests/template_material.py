"""Labelled pairs for near-duplicate grouping on templated stories (issue 25 point 3,
issue 22): briefs a newsroom writes from one house template, written for this
project (invented towns, people and figures).

Two templates: the Vell Valley Courier's planning decisions ("plan-*") and its
Saturday results ("result-*"). Each brief in a template is another story: it
shares the template's sentences (often more than half its words) and its town,
and must NOT group with the others. Some briefs are also told by another outlet
in its own words ("-x") or re-issued from the template with a correction
("-u"): those must group with the brief they tell again.

`PAIRS` lists every labelled pair within a template: (key, key, same story?).
"""

from __future__ import annotations

from itertools import combinations

PLAN = (
    "{town} council's planning committee on {day} {verdict} an application by "
    "{applicant} to {work} at {address}. The committee heard from {objectors} objectors "
    "and {supporters} supporters. Councillor {chair}, who chairs the committee, said the "
    "{reason}. The decision can be appealed to the planning inspectorate within six "
    "months. Planning applications in {town} can be viewed on the council's website, and "
    "comments on open applications are accepted for 21 days after they are published. "
    "This notice is part of our weekly round-up of council decisions across the valley; "
    "to have a decision explained, contact the newsdesk."
)
PLAN_TITLE = "{town} planning: {short}"

RESULT = (
    "{home} {hs}-{aws} {away}: {home} {verb} {away} in the {league} on Saturday at "
    "{ground}, in front of a crowd of {crowd}. {scorer} scored {goals} for {home}, and "
    "{keeper} made {saves} saves. The result leaves {home} {position} in the table on "
    "{points} points. Next week {home} travel to {next}. Full fixtures, results and "
    "tables for every league in the county are in our Sunday sport supplement, and match "
    "reports from every ground are posted on our website by six o'clock."
)
RESULT_TITLE = "{home} {hs}-{aws} {away}"

_PLANS: dict[str, dict[str, str]] = {
    "plan-1": dict(
        town="Vell",
        day="Monday",
        verdict="approved",
        applicant="Corran Homes",
        work="build 14 terraced houses",
        address="the former Tanner's Yard on Mill Row",
        objectors="6",
        supporters="2",
        chair="Hettie Brandt",
        reason="scheme would bring empty land back into use",
        short="14 homes for Tanner's Yard",
    ),
    "plan-2": dict(
        town="Vell",
        day="Monday",
        verdict="refused",
        applicant="Oswin Pryce",
        work="turn a shop into two flats",
        address="22 Bridge Parade",
        objectors="11",
        supporters="0",
        chair="Hettie Brandt",
        reason="parade needed its shops more than flats",
        short="flats refused on Bridge Parade",
    ),
    "plan-3": dict(
        town="Vell",
        day="Monday",
        verdict="approved",
        applicant="St Aldric's school",
        work="add a sports hall",
        address="its playing field on Quarry Lane",
        objectors="3",
        supporters="41",
        chair="Hettie Brandt",
        reason="hall would also be let to clubs in the evenings",
        short="sports hall for St Aldric's",
    ),
    "plan-4": dict(
        town="Vell",
        day="Thursday",
        verdict="deferred",
        applicant="Brightwell Energy",
        work="put up a solar farm of 9,000 panels",
        address="Coldharbour Farm",
        objectors="27",
        supporters="19",
        chair="Hettie Brandt",
        reason="committee wanted a glare study before deciding",
        short="solar farm decision put off",
    ),
    "plan-5": dict(
        town="Vell",
        day="Thursday",
        verdict="approved",
        applicant="Marla Quist",
        work="open a café with 30 seats",
        address="the old toll house on Ford Street",
        objectors="1",
        supporters="8",
        chair="Hettie Brandt",
        reason="toll house had stood empty for eleven years",
        short="café for the old toll house",
    ),
    "plan-6": dict(
        town="Vell",
        day="Thursday",
        verdict="refused",
        applicant="Dunley Storage",
        work="build a warehouse of 4,500 square metres",
        address="land off the A641 at Crook Bend",
        objectors="58",
        supporters="4",
        chair="Hettie Brandt",
        reason="lorries would have to pass the primary school",
        short="warehouse refused at Crook Bend",
    ),
    "plan-7": dict(
        town="Vell",
        day="Monday",
        verdict="approved",
        applicant="the Vell Rowing Club",
        work="replace its boathouse",
        address="the riverbank at Long Meadow",
        objectors="0",
        supporters="23",
        chair="Hettie Brandt",
        reason="old boathouse had been flooded three winters running",
        short="new boathouse for the rowing club",
    ),
    "plan-8": dict(
        town="Vell",
        day="Thursday",
        verdict="approved",
        applicant="Kessock Telecom",
        work="put up a 20-metre phone mast",
        address="the depot on Sawyer's Road",
        objectors="15",
        supporters="5",
        chair="Hettie Brandt",
        reason="mast would end the poor signal in the upper valley",
        short="phone mast approved at Sawyer's Road",
    ),
}
# plan-1 re-issued from the template with the house count corrected.
_PLANS["plan-1-u"] = {**_PLANS["plan-1"], "work": "build 16 terraced houses"}
_PLANS["plan-1-u"]["short"] = "16 homes for Tanner's Yard (corrected)"

_RESULTS: dict[str, dict[str, str]] = {
    "result-1": dict(
        home="Vell Athletic",
        hs="3",
        aws="1",
        away="Harnley Town",
        verb="beat",
        league="Valley League",
        ground="Pound Lane",
        crowd="412",
        scorer="Jory Pascoe",
        goals="twice",
        keeper="Ben Achterberg",
        saves="four",
        position="second",
        points="31",
        next="Stennack",
    ),
    "result-2": dict(
        home="Stennack",
        hs="0",
        aws="2",
        away="Lowmoor Rovers",
        verb="lost to",
        league="Valley League",
        ground="the Recreation Ground",
        crowd="188",
        scorer="nobody",
        goals="nothing",
        keeper="Dai Pellow",
        saves="seven",
        position="ninth",
        points="14",
        next="Harnley Town",
    ),
    "result-3": dict(
        home="Harnley Town",
        hs="2",
        aws="2",
        away="Cobb Wanderers",
        verb="drew with",
        league="Valley League",
        ground="Mill Field",
        crowd="265",
        scorer="Anwen Tregear",
        goals="both",
        keeper="Sol Margery",
        saves="three",
        position="fifth",
        points="24",
        next="Vell Athletic",
    ),
    "result-4": dict(
        home="Lowmoor Rovers",
        hs="4",
        aws="0",
        away="Pellwyn",
        verb="beat",
        league="Valley League",
        ground="Heron Park",
        crowd="530",
        scorer="Tamsin Rowe",
        goals="a hat-trick",
        keeper="Ivo Carne",
        saves="two",
        position="top",
        points="35",
        next="Cobb Wanderers",
    ),
    "result-5": dict(
        home="Cobb Wanderers",
        hs="1",
        aws="0",
        away="Stennack",
        verb="beat",
        league="Valley League",
        ground="Cobb Lane",
        crowd="301",
        scorer="Eli Hosken",
        goals="the only goal",
        keeper="Rory Vinnicombe",
        saves="five",
        position="fourth",
        points="26",
        next="Pellwyn",
    ),
    "result-6": dict(
        home="Pellwyn",
        hs="1",
        aws="3",
        away="Vell Athletic",
        verb="lost to",
        league="Valley League",
        ground="Chapel Meadow",
        crowd="157",
        scorer="Lowen Jago",
        goals="once",
        keeper="Kit Angove",
        saves="six",
        position="bottom",
        points="8",
        next="Lowmoor Rovers",
    ),
}

ARTICLES: dict[str, tuple[str, str]] = {
    **{key: (PLAN_TITLE.format(**f), PLAN.format(**f)) for key, f in _PLANS.items()},
    **{key: (RESULT_TITLE.format(**f), RESULT.format(**f)) for key, f in _RESULTS.items()},
    # The same stories told by another outlet, in its own words.
    "plan-1-x": (
        "Tanner's Yard to get 14 new houses",
        "Fourteen terraced houses will be built on the old Tanner's Yard site on Mill Row in "
        "Vell after councillors gave Corran Homes the go-ahead on Monday. Six people had "
        "written to object and two in support. Hettie Brandt, chair of the planning "
        "committee, said it would bring empty land back into use.",
    ),
    "plan-6-x": (
        "Crook Bend warehouse thrown out over school lorry fears",
        "Dunley Storage has been refused permission for a 4,500 square metre warehouse on "
        "land off the A641 at Crook Bend, near Vell. The planning committee, chaired by "
        "Hettie Brandt, heard 58 objections and 4 letters of support on Thursday; members "
        "said lorries would have had to pass the primary school.",
    ),
    "result-4-x": (
        "Rowe hat-trick sends Lowmoor top",
        "Tamsin Rowe scored a hat-trick as Lowmoor Rovers thrashed Pellwyn 4-0 at Heron Park "
        "on Saturday to go top of the Valley League on 35 points. A crowd of 530 saw Ivo "
        "Carne keep a clean sheet with two saves. Lowmoor face Cobb Wanderers next.",
    ),
}

SAME = {
    frozenset(pair)
    for pair in (
        ("plan-1", "plan-1-u"),
        ("plan-1", "plan-1-x"),
        ("plan-1-u", "plan-1-x"),
        ("plan-6", "plan-6-x"),
        ("result-4", "result-4-x"),
    )
}


def _pairs() -> list[tuple[str, str, bool]]:
    out = []
    for prefix in ("plan-", "result-"):
        keys = sorted(k for k in ARTICLES if k.startswith(prefix))
        out += [(a, b, frozenset((a, b)) in SAME) for a, b in combinations(keys, 2)]
    return out


PAIRS = _pairs()
