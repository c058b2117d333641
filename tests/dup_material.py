"""A small labelled set for near-duplicate grouping (store/duplicates.py), written
for this project: invented towns, people and figures.

Twelve events in six topics. Each event is told by two outlets in their own
words ("a" and "b"); four events also have an updated version of one outlet's
story ("u": new figures, a paragraph added). Within a topic the two events share
the topic's vocabulary and the town, so they are the hard negatives: different
stories that must NOT group.

`PAIRS` lists every labelled pair: (key, key, same event?). `add_draft` stores
one story as a draft, through the status machine (no pipeline run).
"""

from __future__ import annotations

from itertools import combinations, product
from typing import Any

from sqlmodel import Session

from store import status as st
from store.models import Item
from tests.review_seed import Article

ARTICLES: dict[str, tuple[str, str]] = {
    # ---------------------------------------------------------------- council, Harrowby
    "library-a": (
        "Harrowby council backs £4.2m library rebuild",
        "Harrowby borough council voted on Tuesday night to spend £4.2 million rebuilding the "
        "Crane Street library, which has been closed since a roof collapse in March. "
        "Councillor Edda Marsh, who leads on culture, said the new building would open in the "
        "spring of 2028 with a children's floor and a local history room. The vote passed by "
        "31 to 9. Opposition members said the money should go to road repairs first. Work is "
        "due to start in January, and the temporary library in the market hall will stay open "
        "until then.",
    ),
    "library-b": (
        "Crane Street library to be rebuilt after council vote",
        "The Crane Street library in Harrowby will be rebuilt at a cost of £4.2 million after "
        "councillors approved the plan by 31 votes to 9. The library shut in March when part of "
        "its roof fell in. Edda Marsh, the council's culture lead, told the meeting that the "
        "rebuilt library would have a floor for children and a room for local history, and "
        "would open in spring 2028. Critics on the opposition benches argued that road repairs "
        "were more urgent. The market hall will keep hosting a temporary library until building "
        "starts in January.",
    ),
    "library-u": (
        "Harrowby council backs £4.6m library rebuild after cost review",
        "Harrowby borough council voted on Tuesday night to spend £4.6 million rebuilding the "
        "Crane Street library, which has been closed since a roof collapse in March, after a "
        "cost review added £400,000 for fire safety work. Councillor Edda Marsh, who leads on "
        "culture, said the new building would open in the spring of 2028 with a children's "
        "floor and a local history room. The vote passed by 31 to 9. Opposition members said "
        "the money should go to road repairs first. Work is due to start in January, and the "
        "temporary library in the market hall will stay open until then.",
    ),
    "depot-a": (
        "Harrowby councillors throw out bus depot plan",
        "Plans for a new bus depot on the edge of Harrowby were rejected by the borough council "
        "on Tuesday after residents of Pell Lane complained about noise and diesel fumes. The "
        "operator, Greyline Buses, wanted to park 80 buses on the former brickworks site. "
        "Councillor Tom Ashdown said the site was too close to the primary school. Greyline "
        "said it would consider an appeal. The council voted 26 to 14 against the application.",
    ),
    "depot-b": (
        "Greyline depot refused after Pell Lane objections",
        "Greyline Buses has been refused permission to build an 80-bus depot on the old "
        "brickworks site in Harrowby. Councillors voted 26 to 14 against the scheme after Pell "
        "Lane residents objected to the noise and fumes it would bring. Tom Ashdown, a "
        "councillor for the ward, said the primary school was too close to the site. The "
        "company said it was weighing an appeal against the decision.",
    ),
    # ---------------------------------------------------------------- fire, Tarrow
    "warehouse-a": (
        "Fire destroys warehouse at Tarrow docks",
        "More than 60 firefighters fought a blaze that destroyed a timber warehouse at Tarrow "
        "docks overnight. The fire started shortly after 2am at the Kellan Wharf site and "
        "could be seen across the estuary. Nobody was hurt. Station commander Priya Okafor "
        "said crews stopped the flames reaching a neighbouring fuel store. Roads around the "
        "docks stayed closed on Wednesday morning and residents were told to keep windows "
        "shut because of the smoke.",
    ),
    "warehouse-b": (
        "Kellan Wharf blaze: timber store lost, fuel depot saved",
        "A timber warehouse on Kellan Wharf in Tarrow was destroyed by fire in the early hours "
        "of Wednesday. Around 60 firefighters were sent to the docks after the alarm was raised "
        "just after 2am. Priya Okafor, the station commander, said firefighters kept the fire "
        "away from a fuel store next door. No injuries were reported. People living near the "
        "docks were advised to close windows, and several roads remained shut.",
    ),
    "warehouse-u": (
        "Fire destroys warehouse at Tarrow docks; cause under investigation",
        "More than 60 firefighters fought a blaze that destroyed a timber warehouse at Tarrow "
        "docks overnight. The fire started shortly after 2am at the Kellan Wharf site and "
        "could be seen across the estuary. Nobody was hurt. Station commander Priya Okafor "
        "said crews stopped the flames reaching a neighbouring fuel store. Roads around the "
        "docks reopened on Wednesday afternoon. Fire investigators said on Wednesday evening "
        "that they were treating the fire as deliberate, and police appealed for witnesses "
        "who were near the wharf gates between 1am and 2am.",
    ),
    "housefire-a": (
        "Family escapes house fire in Tarrow",
        "A family of four escaped unhurt when fire swept through their terraced house on Moss "
        "Row in Tarrow on Sunday evening. Two fire engines attended and firefighters used "
        "breathing apparatus to put out the blaze, which started in the kitchen. A neighbour, "
        "Graham Pellow, said the family's dog raised the alarm. The house was badly damaged by "
        "smoke. The fire service reminded residents to test their smoke alarms.",
    ),
    "housefire-b": (
        "Dog alerts Moss Row family to kitchen fire",
        "A dog is being credited with saving a family of four after a kitchen fire broke out "
        "at their home on Moss Row, Tarrow, on Sunday. Neighbour Graham Pellow said the dog's "
        "barking woke the household and everyone got out before crews arrived. Firefighters "
        "from two engines wore breathing apparatus to tackle the flames. Smoke caused serious "
        "damage to the terraced house. The fire service urged people to check their alarms.",
    ),
    # ---------------------------------------------------------------- sport, Vell Valley
    "match-a": (
        "Vell Valley Rovers beat Ostmark 3-1",
        "Vell Valley Rovers came from behind to beat Ostmark Athletic 3-1 at Brennan Park on "
        "Saturday. Ostmark led through a Jonas Feld header after 12 minutes, but Rovers "
        "equalised before half-time through Callum Reyes. Reyes scored again on 67 minutes and "
        "substitute Idris Vane added a third in stoppage time. The win lifts Rovers to fourth "
        "in the table. A crowd of 6,412 watched the game.",
    ),
    "match-b": (
        "Reyes double sends Rovers fourth",
        "Callum Reyes scored twice as Vell Valley Rovers beat Ostmark Athletic 3-1 in front of "
        "6,412 fans at Brennan Park. The visitors went ahead on 12 minutes when Jonas Feld "
        "headed in, but Reyes levelled before the break and put Rovers in front midway through "
        "the second half. Idris Vane, on as a substitute, scored the third in added time. "
        "Rovers move up to fourth place.",
    ),
    "signing-a": (
        "Vell Valley Rovers sign striker Marta Quill",
        "Vell Valley Rovers have signed striker Marta Quill from Dunmore City on a two-year "
        "contract. Quill, 24, scored 19 goals last season. Rovers manager Ben Harlow said she "
        "would add pace to the attack and could make her debut against Ostmark Athletic at "
        "Brennan Park next month. The fee was not disclosed. Quill said she was excited to "
        "join a club chasing promotion.",
    ),
    "signing-b": (
        "Quill joins Rovers from Dunmore City",
        "Dunmore City striker Marta Quill has moved to Vell Valley Rovers, signing a contract "
        "for two years for an undisclosed fee. The 24-year-old hit 19 goals last season. Ben "
        "Harlow, the Rovers manager, said her pace would help the attack, and she may make her "
        "first appearance at Brennan Park against Ostmark Athletic next month. Quill said she "
        "wanted to help the club win promotion.",
    ),
    # ---------------------------------------------------------------- health, Kestrel Bay
    "ward-a": (
        "Kestrel Bay hospital opens new children's ward",
        "Kestrel Bay General Hospital opened a 24-bed children's ward on Monday, ending a "
        "two-year wait for families who had to travel to Dunmore for treatment. The £7.8 "
        "million ward has its own play area and six rooms where parents can stay overnight. "
        "Chief executive Anwen Coles said the hospital had recruited 40 nurses to staff it. "
        "The first patients were moved in on Monday afternoon.",
    ),
    "ward-b": (
        "Children's ward opens at Kestrel Bay General",
        "Families in Kestrel Bay no longer have to travel to Dunmore for children's care after "
        "the town's general hospital opened a new ward with 24 beds. The ward cost £7.8 "
        "million and includes a play area and six overnight rooms for parents. Anwen Coles, "
        "the hospital's chief executive, said 40 nurses had been hired for it. Patients began "
        "moving in on Monday.",
    ),
    "ward-u": (
        "Kestrel Bay hospital opens new children's ward as 40 nurses start",
        "Kestrel Bay General Hospital opened a 24-bed children's ward on Monday, ending a "
        "two-year wait for families who had to travel to Dunmore for treatment. The £7.8 "
        "million ward has its own play area and six rooms where parents can stay overnight. "
        "Chief executive Anwen Coles said the hospital had recruited 40 nurses to staff it, "
        "and a second phase with 12 more beds would follow in 2028. The first patients were "
        "moved in on Monday afternoon, and the first baby was discharged on Tuesday.",
    ),
    "strike-a": (
        "Porters at Kestrel Bay hospital walk out over pay",
        "Porters and cleaners at Kestrel Bay General Hospital began a 48-hour strike on "
        "Thursday in a dispute over pay. The union said its 210 members had been offered a "
        "rise of 2 per cent, below inflation. Union organiser Felix Drummond said the staff "
        "kept the hospital running and deserved better. The hospital said planned operations "
        "would go ahead but some clinics were postponed.",
    ),
    "strike-b": (
        "48-hour walkout hits Kestrel Bay General",
        "A two-day strike by 210 porters and cleaners started at Kestrel Bay General Hospital "
        "on Thursday. They rejected a 2 per cent pay offer, which their union says is less "
        "than inflation. Felix Drummond, the union's organiser, said the hospital could not "
        "run without them. Hospital managers said some clinics had been moved but planned "
        "operations would still take place.",
    ),
    # ---------------------------------------------------------------- weather, Dunmore
    "flood-a": (
        "River Ammer floods Dunmore town centre",
        "The River Ammer burst its banks in Dunmore on Friday after 90mm of rain fell in 24 "
        "hours, flooding shops on Quay Street and Mill Lane. About 150 homes were evacuated "
        "and a rest centre opened at the leisure centre. Environment officer Ruth Galloway "
        "said the river peaked at 4.1 metres, the highest level since 2009. Sandbags were "
        "handed out at the fire station.",
    ),
    "flood-b": (
        "150 homes evacuated as Ammer tops its banks",
        "About 150 homes in Dunmore were evacuated when the River Ammer flooded on Friday. "
        "Ninety millimetres of rain in a day sent the river to 4.1 metres, its highest since "
        "2009, said Ruth Galloway of the environment agency. Water poured into shops on Quay "
        "Street and Mill Lane. The leisure centre was opened as a rest centre and sandbags "
        "were given out from the fire station.",
    ),
    "ferry-a": (
        "Storm cancels Dunmore ferry sailings",
        "All ferry sailings between Dunmore and the island of Skerra were cancelled on Sunday "
        "as winds of up to 80mph hit the coast. Operator Westway Ferries said about 400 "
        "passengers were affected. Harbour master Iain Rudd said waves had damaged the "
        "loading ramp. Sailings are expected to resume on Tuesday if the ramp is repaired.",
    ),
    "ferry-b": (
        "Skerra ferry halted as gales batter Dunmore harbour",
        "Westway Ferries called off every crossing from Dunmore to Skerra on Sunday with gusts "
        "reaching 80mph. Around 400 passengers had bookings. Iain Rudd, Dunmore's harbour "
        "master, said the storm had damaged the loading ramp, and services should restart on "
        "Tuesday if repairs are finished.",
    ),
    # ---------------------------------------------------------------- business, Brackwater
    "closure-a": (
        "Brackwater bottling plant to close with loss of 300 jobs",
        "The Halden bottling plant in Brackwater will close next year with the loss of 300 "
        "jobs, its owner Norvik Drinks said on Wednesday. Production will move to a site in "
        "Ostmark. Plant manager Siobhan Reilly told staff the decision was about costs, not "
        "their work. Brackwater's mayor, Piotr Lind, called the news a heavy blow for the "
        "town and said he would ask Norvik to reconsider.",
    ),
    "closure-b": (
        "300 jobs to go as Norvik shuts Halden plant",
        "Norvik Drinks is to shut its Halden bottling plant in Brackwater, putting 300 people "
        "out of work, and move the production to Ostmark. Siobhan Reilly, who manages the "
        "plant, told workers it was a cost decision and no reflection on them. Mayor Piotr "
        "Lind said it was a heavy blow to Brackwater and that he would press the company to "
        "think again.",
    ),
    "closure-u": (
        "Brackwater bottling plant to close with loss of 300 jobs; talks offered",
        "The Halden bottling plant in Brackwater will close next year with the loss of 300 "
        "jobs, its owner Norvik Drinks said on Wednesday. Production will move to a site in "
        "Ostmark. Plant manager Siobhan Reilly told staff the decision was about costs, not "
        "their work. Brackwater's mayor, Piotr Lind, called the news a heavy blow for the "
        "town. On Thursday Norvik agreed to meet the mayor and union representatives next "
        "week, and said 45 staff would be offered jobs in Ostmark.",
    ),
    "expansion-a": (
        "Brackwater firm to hire 120 as it expands",
        "Lyle Precision, which makes parts for wind turbines, will hire 120 people in "
        "Brackwater after winning a contract worth £30 million. Managing director Ama Osei "
        "said the firm would build a second workshop on the Fenwick industrial estate. Mayor "
        "Piotr Lind welcomed the jobs, saying the town needed good news. Recruitment starts "
        "next month.",
    ),
    "expansion-b": (
        "£30m contract brings 120 jobs to Brackwater",
        "A £30 million contract for wind turbine parts means Lyle Precision will take on 120 "
        "new staff in Brackwater. The company's managing director, Ama Osei, said a second "
        "workshop would be built at the Fenwick estate. Brackwater's mayor, Piotr Lind, said "
        "the town badly needed the good news. The firm will begin recruiting next month.",
    ),
}

# Each topic's two events, each event's versions.
TOPICS: list[tuple[list[str], list[str]]] = [
    (["library-a", "library-b", "library-u"], ["depot-a", "depot-b"]),
    (["warehouse-a", "warehouse-b", "warehouse-u"], ["housefire-a", "housefire-b"]),
    (["match-a", "match-b"], ["signing-a", "signing-b"]),
    (["ward-a", "ward-b", "ward-u"], ["strike-a", "strike-b"]),
    (["flood-a", "flood-b"], ["ferry-a", "ferry-b"]),
    (["closure-a", "closure-b", "closure-u"], ["expansion-a", "expansion-b"]),
]


def _pairs() -> list[tuple[str, str, bool]]:
    pairs: list[tuple[str, str, bool]] = []
    for first, second in TOPICS:
        for event in (first, second):
            pairs += [(a, b, True) for a, b in combinations(event, 2)]
        pairs += [(a, b, False) for a, b in product(first, second)]
    return pairs


PAIRS = _pairs()


def add_draft(session: Session, key: str, title: str, text: str) -> int:
    """A submitted item moved straight to draft with `text` as its source (the
    summary is its first 120 characters); its id."""
    item = Item(dedup_key=f"https://dup.example.test/{key}", title=title)
    st.create(session, item, actor="cli", reason="submitted")
    st.move(
        session,
        item,
        st.DRAFT,
        actor="run:1",
        changes={"source_text": text, "headline": title, "summary": text[:120]},
    )
    return item.id  # type: ignore[return-value]


def story(key: str) -> Article:
    """A story of ARTICLES as a feed entry with a recorded, faithful reply: its
    first sentence, word for word (the gates pass it), for tests/review_seed.py's
    `seed_article`."""
    title, text = ARTICLES[key]
    first = text.split(". ")[0] + "."
    return Article(key, title, text, title, first)


def committed_draft(engine: Any, key: str) -> int:
    """`add_draft` of the article `key` of ARTICLES, committed; its id."""
    with Session(engine) as session:
        item_id = add_draft(session, key, *ARTICLES[key])
        session.commit()
    return item_id
