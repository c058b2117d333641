"""The language a feed or a page declares for its text, as a short code.

Feeds declare it in RSS `<language>` / `dc:language`, Atom `xml:lang` (on the feed
or the entry's content), JSON Feed `language`; pages in `<html lang>` (or
`xml:lang`), `<meta http-equiv="content-language">` or `og:locale`. The value is
meant to be an RFC 3066 / BCP 47 tag ("en-GB", "de"), but publishers also write
"English" or "fr_FR": feedparser passes it on as written ("Universal Feed Parser
does not do any parsing or normalization of language codes",
https://pythonhosted.org/feedparser/reference-feed-title_detail.html). Stored on the
item (`items.language`, migration 0016) so that the gates read the number
separators and date words of that language instead of detecting it from the text;
detection stays the fallback when nothing is declared.
"""

from __future__ import annotations

import re

from guards.units import THREE_LETTER

# The primary subtag of a BCP 47 tag ("en-GB", "de_AT", "fr"): two or three letters.
_TAG = re.compile(r"^\s*([A-Za-z]{2,3})(?:[-_][A-Za-z0-9]{1,8})*\s*$")
# Names publishers write instead of a code (feedparser's docs quote "English", "German").
_NAMES = {
    "english": "en", "german": "de", "deutsch": "de", "french": "fr", "français": "fr",
    "francais": "fr", "spanish": "es", "español": "es", "espanol": "es", "italian": "it",
    "italiano": "it", "dutch": "nl", "nederlands": "nl",
}  # fmt: skip


def language_code(value: object) -> str | None:
    """The lower-case primary language subtag of a declared language ("en-GB" -> "en",
    "de_AT" -> "de", "English" -> "en"; the three-letter codes of the languages the
    gates read as their two-letter ones: "fre" -> "fr", "deu" -> "de"), or None when it
    is absent or unreadable ("x-klingon" and "*" say nothing the gates can use)."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    name = _NAMES.get(text.lower())
    if name:
        return name
    m = _TAG.match(text)
    if m is None or m.group(1).lower() in ("x", "i", "und", "mul", "zxx"):
        return None
    code = m.group(1).lower()
    return THREE_LETTER.get(code, code)  # "fre", "deu": the gates' languages, as "fr", "de"


def first_language(*values: object) -> str | None:
    """The first of `values` that reads as a language (the most specific first)."""
    for value in values:
        code = language_code(value)
        if code:
            return code
    return None


# ISO 639-1, the two-letter language codes (the Library of Congress's list, the
# registration authority: https://www.loc.gov/standards/iso639-2/php/code_list.php).
ISO_639_1 = frozenset(
    """
    aa ab ae af ak am an ar as av ay az ba be bg bi bm bn bo br bs ca ce ch co cr cs cu cv
    cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho
    hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku
    kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn
    no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm
    sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi
    vo wa wo xh yi yo za zh zu
    """.split()
)


def known_language(value: str) -> str | None:
    """The ISO 639-1 code of a language tag given by hand ("fr", "de-AT", "English"),
    or None when it names no language of that list ("klingon", "qq", "fre")."""
    code = language_code(value)
    return code if code in ISO_639_1 else None
