"""A labelled set for names_grounded written for issue 20: the noise that taught
editors to ignore the flag (temperatures, units, acronyms of names the source
spells out, title-case headline verbs, common-noun acronyms) and the misses
(a numeral changed in a name, a title that blends two people, a surname taken
from a place name), in English, French and German newsroom prose.

Each case: (source, draft, the names the draft invents). The gate should flag
exactly those (a flagged name counts as right when it contains one of them).
Every person, place and organisation is invented.
"""

from __future__ import annotations

WEATHER = (
    "Temperatures fell to -17.4C in Kelbrook overnight, the coldest night since records "
    "began, the Met Office said. Gritters from Vell County Council worked through the night "
    "on the A614. The wind farm at Hollin Moor produced 450 megawatts on Tuesday."
)
MARKETS = (
    "The Competition and Markets Authority has opened an inquiry into the purchase of "
    "Tallis Foods by Keldmoor Holdings. Keldmoor bought the firm for £48m in June. Its "
    "chief executive, Dr Anneke Voss, said she would co-operate. A family doctor in "
    "Kelbrook, Dr Omar Reyes, said patients had complained about prices."
)
HISTORY = (
    "The memorial on Quay Lane lists 41 men from Brackwater who died in the Second World "
    "War, which the council's plaque calls World War II. Judge Helen Marsh unveiled a new "
    "panel on Sunday with Ruth Calloway, who chairs the Brackwater Historical Society. "
    "The ceremony was held at Kelbrook Retail Park because the quay was flooded."
)
FRENCH = (
    "Le maire de Vellmont, Julien Faure, a inauguré la piscine rénovée. La Caisse des "
    "dépôts et consignations a financé les travaux. La température de l'eau est de 27C. "
    "Claire Dumas, conseillère municipale, a salué le projet."
)
GERMAN = (
    "Die Bürgermeisterin von Ostbrück, Anna Keller, hat das neue Hallenbad eröffnet. Die "
    "Kreditanstalt für Wiederaufbau hat den Bau gefördert. Das Wasser hat 28C. "
    "Oppositionsführer Jonas Brandt kritisierte die Kosten."
)

CASES: list[tuple[str, str, set[str]]] = [
    # --- noise: none of these is an invented name
    (WEATHER, "Kelbrook recorded -17.4C, the coldest night on record.", set()),
    (WEATHER, "It was \u221217.4C in Kelbrook overnight.", set()),
    (WEATHER, "Hollin Moor produced 450 MW on Tuesday.", set()),
    (WEATHER, "Hollin Moor produced 450MW, the Met Office said.", set()),
    (WEATHER, "Gritters worked on the A614 overnight.", set()),
    (MARKETS, "The CMA has opened an inquiry into the Tallis Foods deal.", set()),
    (MARKETS, "Keldmoor Buys Tallis Foods For \u00a348m\nThe CMA is looking at the deal.", set()),
    (MARKETS, "Keldmoor Holdings Faces Inquiry Over Tallis Purchase", set()),
    (MARKETS, "A Kelbrook GP said patients had complained about prices.", set()),
    (MARKETS, "Dr Voss, the CEO of Keldmoor, said she would co-operate.", set()),
    (HISTORY, "Judge Helen Marsh unveiled a panel at the World War II memorial.", set()),
    (HISTORY, "Ruth Calloway chairs the Brackwater Historical Society.", set()),
    (FRENCH, "Julien Faure a inauguré la piscine, où l'eau est à 27C.", set()),
    (FRENCH, "La CDC a financé les travaux, selon Claire Dumas.", set()),
    (GERMAN, "Anna Keller eröffnete das Hallenbad; das Wasser hat 28C.", set()),
    (GERMAN, "Die KfW hat den Bau gefördert, Jonas Brandt kritisierte die Kosten.", set()),
    # --- misses: each of these is an invented name
    (HISTORY, "The memorial honours men who died in World War I.", {"World War I"}),
    (HISTORY, "Judge Ruth Marsh unveiled a new panel on Sunday.", {"Judge Ruth Marsh"}),
    (HISTORY, "Ms Park, who chairs the society, unveiled the panel.", {"Park"}),
    (HISTORY, "Mr Retail said the quay was flooded.", {"Retail"}),
    (MARKETS, "Dr Omar Voss said patients had complained.", {"Omar Voss"}),
    (MARKETS, "The Office of Fair Trading has opened an inquiry.", {"Office of Fair Trading"}),
    (MARKETS, "The CMA and the FCA are looking at the deal.", {"FCA"}),
    (WEATHER, "Temperatures fell to -17.4C in Kelmouth overnight.", {"Kelmouth"}),
    (WEATHER, "The Hollin Moor wind farm is run by Northgrid.", {"Northgrid"}),
    (FRENCH, "Le maire, Julien Dumas, a inauguré la piscine.", {"Julien Dumas"}),
    (FRENCH, "La BPI a financé les travaux.", {"BPI"}),
    (GERMAN, "Bürgermeisterin Anna Brandt eröffnete das Hallenbad.", {"Anna Brandt"}),
    (GERMAN, "Die Sparkasse Ostbrück hat den Bau gefördert.", {"Sparkasse"}),
    (GERMAN, "Herr Wiederaufbau kritisierte die Kosten.", {"Wiederaufbau"}),
]
