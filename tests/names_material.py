"""Annotated material for measuring names_grounded (precision and recall).

Invented articles and drafts written for copydesk; every person, place and
organisation is made up. Each draft lists the names it invents (a name the
source never gives, or a first name it never gives): the gate should flag
exactly those. bench/bench_names.py prints the figures; a test holds them.
"""

from __future__ import annotations

ARTICLES = {
    "harbour": (
        "The harbour board of Ostbrook voted on Monday to lease the old Varga terminal to "
        "Keldmoor Shipping for ten years. The chair, Mira Tallis, said the deal would keep "
        "forty jobs at the quay. Councillor Jan Olde, who sits on the board, voted against "
        "and said the lease was too cheap. Mr Olde told the Ostbrook Courier that the board "
        "had ignored a rival offer from the Fisherfolk Co-operative. Keldmoor's chief "
        "executive, Dr Anneke Voss, said the company would dredge the north berth. The "
        "Ministry of Coasts must still approve the lease. Residents of St Brenda's Row "
        "fear more lorries on Quay Lane."
    ),
    "library": (
        "Vell County Council will close the Fennick branch library in April unless a "
        "community group takes it over, the council's cabinet decided. Helen Marchbank, who "
        "runs the Friends of Fennick Library, said volunteers were ready. The cabinet member, "
        "Cllr Tom Ashdown, said savings of £1.2 million were needed. Mrs Marchbank said the "
        "group had met officials from the Arts Trust of Vell. The library opened in 1962 on "
        "Mill Street and was extended with money from the Dunmore Foundation."
    ),
    "court": (
        "A jury at Harrowgate Crown Court found the former treasurer of Brackwater rowing "
        "club guilty of taking £48,000. Judge Priya Nandakumar said Colin Fairweather had "
        "abused the trust of members. The club's captain, Mr Selby, told the court the loss "
        "had nearly ended the club. Fairweather, of Linton Road, Brackwater, will be "
        "sentenced in March. Detective Sergeant Ruth Abara of Vell Police said the case "
        "showed small clubs needed two signatories."
    ),
    "storm": (
        "Storm Ingrid brought down power lines across the Vell Valley overnight, leaving "
        "12,000 homes without electricity. Northgrid said engineers from Carrow and Dunmore "
        "were working to restore supplies. The Met Office for the Valley issued an amber "
        "warning for wind until noon. In Marrowby, the primary school and the Red Lion "
        "closed. Alun Price, who farms near Coldharbour, said trees blocked the lane to his "
        "farm."
    ),
}

# (article, draft, names the draft invents)
DRAFTS: list[tuple[str, str, set[str]]] = [
    ("harbour", "Ostbrook's harbour board leased the Varga terminal to Keldmoor Shipping.", set()),
    ("harbour", "Board chair Mira Tallis said forty jobs would stay at the quay.", set()),
    ("harbour", "Jan Olde voted against the lease, the Ostbrook Courier reported.", set()),
    ("harbour", "Dr Voss said Keldmoor would dredge the north berth.", set()),
    ("harbour", "Anneke Voss, Keldmoor's chief executive, backed the deal.", set()),
    ("harbour", "The Ministry of Coasts must approve the lease.", set()),
    ("harbour", "Residents of St Brenda's Row fear lorries on Quay Lane.", set()),
    ("harbour", "Councillor Peter Olde voted against the lease.", {"Peter"}),
    ("harbour", "Keldmoor chief Hans Voss said the berth would be dredged.", {"Hans"}),
    ("harbour", "The Port Authority of Ostbrook backed the board.", {"Port Authority"}),
    ("harbour", "Mira Tallis said Baltic Freight had also bid for the terminal.", {"Baltic"}),
    ("harbour", "Meanwhile, the Fisherfolk Co-operative said its offer was ignored.", set()),
    ("harbour", "However, Mayor Lena Hart welcomed the vote.", {"Lena Hart"}),
    ("library", "Vell County Council will close Fennick library in April.", set()),
    ("library", "Helen Marchbank said the Friends of Fennick Library were ready.", set()),
    ("library", "Cllr Ashdown said savings of £1.2 million were needed.", set()),
    ("library", "Thomas Ashdown said savings were needed.", {"Thomas"}),
    ("library", "The Arts Council of England has offered help.", {"England"}),
    ("library", "Officials from the Arts Trust of Vell met the group.", set()),
    (
        "library",
        "The library, on Mill Street since 1962, was extended by the Dunmore Foundation.",
        set(),
    ),
    ("library", "Mrs Marchbank's group is backed by the Carnegie Fund.", {"Carnegie Fund"}),
    (
        "library",
        "Volunteers are ready, said Helen Marchbank of the Women's Institute.",
        {"Women's Institute"},
    ),
    ("court", "Colin Fairweather was found guilty at Harrowgate Crown Court.", set()),
    ("court", "Judge Nandakumar said he had abused members' trust.", set()),
    ("court", "Judge Priya Shah said he had abused members' trust.", {"Shah"}),
    ("court", "Club captain Mark Selby said the loss nearly ended the club.", {"Mark"}),
    # DS is the source's Detective Sergeant: an acronym of a name the source spells out
    # is grounded (issue 20; it was labelled invented before).
    ("court", "DS Ruth Abara said small clubs needed two signatories.", set()),
    ("court", "Fairweather, of Linton Road, will be sentenced in March.", set()),
    (
        "court",
        "The Amateur Rowing Association has suspended the club.",
        {"Amateur Rowing Association"},
    ),
    ("storm", "Storm Ingrid left 12,000 homes in the Vell Valley without power.", set()),
    ("storm", "Northgrid engineers from Carrow and Dunmore worked overnight.", set()),
    ("storm", "The Met Office issued an amber warning; the Red Lion in Marrowby closed.", set()),
    ("storm", "Farmer Alun Price said trees blocked his lane near Coldharbour.", set()),
    ("storm", "Storm Ingrid also closed Marrowby station, said Network Vell.", {"Network Vell"}),
    ("storm", "Gareth Price, a farmer, said trees blocked the lane.", {"Gareth"}),
    ("storm", "Northgrid said Scottish Power crews were helping.", {"Scottish Power"}),
    ("storm", "In Marrowby, St Aidan's primary school closed.", {"Aidan"}),
    ("storm", "Engineers worked through the night, Northgrid said.", set()),
]

# Written after the heuristic was settled and measured once, without changes
# to the gate afterwards: the figures docs/gates.md quotes as held out.
HELD_OUT_ARTICLE = (
    "Brackwater's new ferry, the Saltmarsh Queen, made its first crossing to Hollin Isle on "
    "Saturday after a two-year delay. The operator, Westreach Ferries, blamed the shipyard "
    "in Carrow for the delay. Its managing director, Yusuf Demir, said the vessel would "
    "carry 400 passengers. Islanders' spokeswoman Orla Keegan said fares were still too "
    "high. The Department for Island Transport paid for half of the ship. Captain Ilse "
    "Brandt took the helm; Mr Demir and the harbourmaster, Mr Penrose, were on board."
)
HELD_OUT: list[tuple[str, set[str]]] = [
    ("The Saltmarsh Queen made its first crossing to Hollin Isle.", set()),
    ("Westreach Ferries blamed the Carrow shipyard for the delay.", set()),
    ("Managing director Yusuf Demir said it would carry 400 passengers.", set()),
    ("Orla Keegan, for the islanders, said fares were too high.", set()),
    ("The Department for Island Transport paid for half the ship.", set()),
    ("Captain Brandt took the helm with harbourmaster Tom Penrose aboard.", {"Tom"}),
    ("Westreach chief Ahmet Demir said the ship was ready.", {"Ahmet"}),
    ("Hollin Isle Council welcomed the ship.", {"Council"}),
    ("The Maritime and Coastguard Agency certified the vessel.", {"Maritime"}),
    ("Islanders, led by Orla Keegan of Hollin Action, said fares were high.", {"Hollin Action"}),
    ("Passengers from Brackwater cheered as the ferry left.", set()),
    ("Delayed by two years, the ferry finally sailed on Saturday.", set()),
]
