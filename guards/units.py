"""What a number counts: its unit and kind, read from the words around it, and the
language of a text (for separators and scale words).

A unit is a short string:

* "%" (per cent, Prozent, pour cent...) and "pp" (percentage points);
* "cur:GBP", "cur:EUR", "cur:USD"... and "cur:$" (a bare dollar sign, which
  grounds and is grounded by any dollar);
* "len:km", "len:m", "len:mi", "mass:kg", "time:min"... for units of measure
  and time; a frequency ("every 15 minutes", "alle 15 Minuten", "toutes les
  15 minutes") is "freq:min", never the duration "time:min";
* "clock" and "clock:min" for the hour and minute of a clock time;
* "n:<noun>" for a count tied to the noun after it ("31 votes"), which only
  tells it apart from a percentage, a currency or a measure;
* "scaled" for the million reading of an ambiguous "46m" (46 metres or 46
  million): it grounds a count or a sum, never a measure;
* None: nothing said. None is compatible with every unit (the gate grounds
  the value, as before), so only two units that are both stated can disagree.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

# --- language --------------------------------------------------------------------

LANGUAGES = ("en", "de", "fr", "es", "it", "nl")
# The three-letter codes of those languages: ISO 639-2 bibliographic (ger, fre, dut) and
# terminology codes, the latter also their ISO 639-3 codes (the Library of Congress's
# list, https://www.loc.gov/standards/iso639-2/php/code_list.php). A feed may declare
# one; an item stored before they were mapped may carry one (`items.language`).
THREE_LETTER = {
    "eng": "en", "ger": "de", "deu": "de", "fre": "fr", "fra": "fr", "spa": "es",
    "ita": "it", "dut": "nl", "nld": "nl",
}  # fmt: skip


def gate_language(code: str | None) -> str | None:
    """The language the gates read for a declared code ("fr", or "fre"/"fra"), None for
    a language they do not read (then the text's is detected)."""
    if code in LANGUAGES:
        return code
    return THREE_LETTER.get(code) if code else None


_STOPWORDS = {
    "en": "the and of to in is was that for with from by on are has have said will".split(),
    "de": "der die das und ist nicht mit von den dem des ein eine sich auf für wurde hat".split(),
    "fr": "le la les et est des une du dans pour sur qui pas avec au aux été d l".split(),
    "es": "el la los las y es del en una por con para que se al fue ha más".split(),
    "it": "il lo la gli le è di del della che con una un sono ha al più".split(),
    "nl": "de het een en van is dat op te in voor met zijn niet heeft werd".split(),
}
_WORD_OF: dict[str, set[str]] = {}
for _lang in reversed(LANGUAGES):  # a word shared by several languages: the first listed
    for _w in _STOPWORDS[_lang]:
        _WORD_OF.setdefault(_w, set()).add(_lang)
_WORDS = re.compile(r"[^\W\d_]+")


def detect_language(text: str, limit: int = 1200) -> str | None:
    """The language of `text` among LANGUAGES by the function words of its first
    `limit` characters (`_detect`), or None; cached: the numbers and dates gates both
    ask about the same draft and source."""
    return _detect(text[:limit])


@lru_cache(maxsize=512)
def _detect(text: str) -> str | None:
    """The language of `text` among LANGUAGES by its function words, or None when
    it has none of them.

    Another language than English must be plain: at least three of its function
    words and more than twice as many as English ones, so that a French name
    ("de la Tour") in an English draft does not make "1,250" read 1.25."""
    counts = dict.fromkeys(LANGUAGES, 0)
    # Only the function words are counted, found and counted in C (`filter` with the
    # table's own lookup, then `Counter`): a Python loop per word costs three times more.
    for word, n in Counter(filter(_WORD_OF.__contains__, text.lower().split())).items():
        for lang in _WORD_OF[word]:
            counts[lang] += n
    best = max(LANGUAGES[1:], key=lambda lang: counts[lang])
    if counts[best] >= 3 and counts[best] > 2 * counts["en"]:
        return best
    return "en" if counts["en"] else None


def european(language: str | None) -> bool:
    """A language whose decimal mark is a comma and whose digits group with a space or dot."""
    return language is not None and language != "en"


# --- units -------------------------------------------------------------------------

_CURRENCY_SYMBOLS = {"£": "GBP", "€": "EUR", "$": "$", "¥": "JPY", "₹": "INR", "₩": "KRW"}
_DOLLAR_PREFIXES = {"us": "USD", "a": "AUD", "c": "CAD", "nz": "NZD", "hk": "HKD", "s": "SGD"}
_CODES = "gbp eur usd chf jpy sek nok dkk pln czk huf aud cad nzd inr cny hkd".split()
_CURRENCY_WORDS = {
    "pounds": "GBP", "pound": "GBP", "sterling": "GBP", "pence": "GBp",
    "euros": "EUR", "euro": "EUR", "eur": "EUR", "€": "EUR",
    "dollars": "$", "dollar": "$", "francs": "CHF", "franken": "CHF",
    "kronor": "SEK", "kroner": "NOK", "yen": "JPY", "rupees": "INR",
}  # fmt: skip
_PERCENT = {"%", "percent", "per cent", "prozent", "pour cent", "por ciento", "per cento"}
_PERCENT |= {"procent", "pct"}
_POINTS = {
    "percentage points", "percentage point", "percentage-point", "pp", "ppt", "ppts",
    "prozentpunkte", "prozentpunkten", "prozentpunkt", "points de pourcentage",
    "point de pourcentage", "puntos porcentuales", "punti percentuali", "procentpunt",
    "procentpunten",
}  # fmt: skip
_MEASURES = {
    "km": "len:km", "kilometre": "len:km", "kilometres": "len:km", "kilometer": "len:km",
    "kilometers": "len:km", "kilomètres": "len:km", "kilómetros": "len:km",
    "chilometri": "len:km", "m": "len:m", "metre": "len:m", "metres": "len:m",
    "meter": "len:m", "meters": "len:m", "mètres": "len:m", "mètre": "len:m",
    "metros": "len:m", "metri": "len:m", "cm": "len:cm", "centimetres": "len:cm",
    "mm": "len:mm", "millimetres": "len:mm", "mile": "len:mi", "miles": "len:mi",
    "mi": "len:mi", "ft": "len:ft", "feet": "len:ft", "foot": "len:ft", "inch": "len:in",
    "inches": "len:in", "yards": "len:yd", "yard": "len:yd",
    "kg": "mass:kg", "kilos": "mass:kg", "kilograms": "mass:kg", "kilogrammes": "mass:kg",
    "kilogramm": "mass:kg", "g": "mass:g", "grams": "mass:g", "grammes": "mass:g",
    "tonnes": "mass:t", "tonne": "mass:t", "tons": "mass:t", "ton": "mass:t",
    "tonnen": "mass:t", "tonnellate": "mass:t", "toneladas": "mass:t", "t": "mass:t",
    "lb": "mass:lb", "lbs": "mass:lb", "pounds weight": "mass:lb", "stone": "mass:st",
    "litres": "vol:l", "litre": "vol:l", "liter": "vol:l", "liters": "vol:l", "l": "vol:l",
    "hectares": "area:ha", "hectare": "area:ha", "ha": "area:ha", "hektar": "area:ha",
    "acres": "area:acre", "acre": "area:acre",
    "mph": "speed:mph", "km/h": "speed:kmh", "kmh": "speed:kmh",
    "°c": "temp:c", "c": "temp:c", "°f": "temp:f", "degrees": "temp:deg",
    "mw": "power:mw", "kw": "power:kw", "gw": "power:gw", "kwh": "energy:kwh",
    "seconds": "time:s", "second": "time:s", "secs": "time:s", "sekunden": "time:s",
    "minutes": "time:min", "minute": "time:min", "mins": "time:min", "min": "time:min",
    "minuten": "time:min", "minutos": "time:min", "minuti": "time:min",
    "hours": "time:h", "hour": "time:h", "hrs": "time:h", "stunden": "time:h",
    "heures": "time:h", "horas": "time:h", "ore": "time:h", "uur": "time:h",
    "days": "time:d", "day": "time:d", "tage": "time:d", "tagen": "time:d",
    "jours": "time:d", "días": "time:d", "giorni": "time:d", "dagen": "time:d",
    "weeks": "time:w", "week": "time:w", "wochen": "time:w", "semaines": "time:w",
    "months": "time:mo", "month": "time:mo", "monate": "time:mo", "monaten": "time:mo",
    "mois": "time:mo", "meses": "time:mo", "mesi": "time:mo", "maanden": "time:mo",
    "years": "time:y", "year": "time:y", "jahre": "time:y", "jahren": "time:y",
    "ans": "time:y", "años": "time:y", "anni": "time:y", "jaar": "time:y",
}  # fmt: skip
# Words after a number that say nothing of what it counts (no noun is read there).
_NOT_NOUNS = frozenset(
    """
    of to and or nor but in on at by for from the a an as than per more less fewer extra
    further additional other new up down over under about around between among across
    against along behind below beneath beside beyond within without through throughout
    toward towards via into onto upon out off back away ago apart aside earlier later
    before after since until till during while when where whereas whether which who
    that this these those it its their his her our your my them they he she we you
    is was were are be been being has had have having will would shall should can could
    may might must do does did done said says say told reported according compared
    versus vs only alone each apiece respectively so too also now then still yet just
    even almost nearly about roughly some many most much few several all both either
    neither any every last next first times time fold square cubic sq degrees cent
    percent if not no never already again once twice here there today tonight yesterday
    tomorrow ahead instead altogether overall total net gross higher lower above
    de des du la le les et und der die das von zu im am mit en el y di il e van het een
    """.split()
)
_FREQUENCY_BEFORE = re.compile(
    r"(?:\bevery|\beach|\balle|\btoutes\s+les|\btous\s+les|\bcada|\bogni|\belke|\biedere)\s+$",
    re.IGNORECASE,
)
_AFTER = re.compile(
    r"""[ \u00a0\u202f\u2009]?-?[ ]?(?P<w>%|°[cf]|km/h|[^\W\d_]+(?:[ -][^\W\d_]+)?)""",
    re.IGNORECASE,
)
_OF_CURRENCY = re.compile(
    r"[ \u00a0]+(?:(?:of|de|di|d['\u2019])[ ]?)?(?P<w>pounds|euros?|dollars|francs|franken|"
    r"kronor|kroner|yen|rupees|sterling|€|eur|usd|gbp|chf)\b",
    re.IGNORECASE,
)
_PREFIX = re.compile(
    r"(?:(?P<code>[a-z]{3})[ \u00a0]?|(?P<dp>us|a|c|nz|hk|s)?(?P<sym>[£€$¥₹₩]))[ \u00a0]?$",
    re.IGNORECASE,
)
_SUFFIX_SYMBOL = re.compile(r"[ \u00a0\u202f]?(?P<s>[€£$])")


def currency_before(text: str, start: int) -> str | None:
    """The currency written before a number at `start`: £, €, $, US$, EUR, GBP."""
    m = _PREFIX.search(text, max(0, start - 5), start)
    if m is None:
        return None
    if m.group("code"):
        code = m.group("code").lower()
        if code not in _CODES:
            return None
        before = m.start()
        if before and text[before - 1].isalpha():
            return None
        return code.upper()
    if m.group("dp") and m.start() and text[m.start() - 1].isalpha():
        return _CURRENCY_SYMBOLS[m.group("sym")]
    if m.group("dp"):
        return _DOLLAR_PREFIXES[m.group("dp").lower()] if m.group("sym") == "$" else None
    return _CURRENCY_SYMBOLS[m.group("sym")]


def unit_after(text: str, end: int, glued_m: bool = False) -> str | None:
    """The unit written right after a number (and its scale word) ending at `end`."""
    m = _OF_CURRENCY.match(text, end)
    if m:
        word = m.group("w").lower()
        return "cur:" + _CURRENCY_WORDS.get(word, word.upper())
    m = _SUFFIX_SYMBOL.match(text, end)
    if m:
        return "cur:" + _CURRENCY_SYMBOLS[m.group("s")]
    if glued_m:
        return None
    m = _AFTER.match(text, end)
    if m is None:
        return None
    words = m.group("w").lower()
    glued = m.start("w") == end
    if words in _POINTS:
        return "pp"
    first = words.split()[0].split("-")[0] if words not in _PERCENT else words
    if words in _PERCENT or first in _PERCENT:
        return "%" if first != "per" else None
    for phrase in (words, " ".join(words.split()[:2])):
        if phrase in _POINTS:
            return "pp"
    if first in ("per", "pour", "por") and words.split()[-1] in ("cent", "ciento", "cento"):
        return "%"
    if first in _MEASURES:
        unit = _MEASURES[first]
        if len(first) <= 2 and first not in ("km", "mi", "ft", "kg", "ha", "mm", "cm"):
            # single letters (m, g, t, l, c) count only glued or before a non-letter
            after = m.start("w") + len(first)
            if not glued and (after < len(text) and text[after].isalpha()):
                return None
        return unit
    if first in _CURRENCY_WORDS:
        return "cur:" + _CURRENCY_WORDS[first]
    if not glued and first.isalpha() and first.islower() and len(first) >= 3:
        if first not in _NOT_NOUNS and not first.endswith("ly"):
            return "n:" + first
    return None


def kind(text: str, start: int, unit: str | None) -> str | None:
    """A time unit after "every"/"alle"/"toutes les" is a frequency."""
    if (
        unit
        and unit.startswith("time:")
        and _FREQUENCY_BEFORE.search(text, max(0, start - 14), start)
    ):
        return "freq:" + unit[5:]
    return unit


def compatible(draft: str | None, source: str | None) -> bool:
    """Whether a draft unit may be grounded by a source unit (see the module)."""
    if draft is None or source is None or draft == source:
        return True
    if draft.startswith("cur:") and source.startswith("cur:"):
        d, s = draft[4:], source[4:]
        dollars = ("$", "USD", "AUD", "CAD", "NZD", "HKD", "SGD")
        return (d == "$" and s in dollars) or (s == "$" and d in dollars)
    if draft.startswith("n:") and source.startswith("n:"):
        return True  # two nouns: "17 members" and "17 councillors" may be the same
    if "scaled" in (draft, source):
        other = source if draft == "scaled" else draft
        return other.startswith(("cur:", "n:"))
    return False


def describe(unit: str | None) -> str:
    """A unit as the editor reads it."""
    if unit is None:
        return "no unit"
    if unit.startswith("cur:"):
        return unit[4:]
    if unit.startswith("n:"):
        return f"a count of {unit[2:]}"
    if unit.startswith("freq:"):
        return f"every ... {unit[5:]}"
    return {"pp": "percentage points", "%": "per cent", "scaled": "a count"}.get(unit, unit)
