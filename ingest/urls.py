"""Canonical URLs: one article, one key, however the link was decorated.

Why this is written here and not taken from `courlan` (installed with trafilatura):
courlan's `normalize_url` was checked against every case in tests/test_urls.py and
does a different job. It sorts the query (`?b=2&a=1` becomes `?a=1&b=2`: every
stored dedup key with two parameters would change, so known articles would come
back as new), drops valueless parameters (`?flag&x=1`), re-encodes `%20` as `+`,
keeps fragments, user names and passwords, trailing dots and `:80` on IPv6 hosts,
and leaves `%7e` and dot segments alone. Its tracker pattern also removes a site's
own parameters (`gallery`, `sources`, `uid`, `keyword`, `session`), which for a
dedup key is the dangerous direction: two different articles would share a key
and the second would be counted as a duplicate of the first. So the contract below
stays, with an explicit list of tracking parameters.
"""

from __future__ import annotations

import re
from urllib.parse import unquote_plus, urlsplit, urlunsplit

# Query parameters that identify a campaign or a click, never the article.
TRACKING_PARAMS = frozenset(
    {
        "fbclid",
        "gclid",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "yclid",
        "twclid",
        "mc_cid",
        "mc_eid",
        "igshid",
        "_hsenc",
        "_hsmi",
        "mkt_tok",
        "oly_anon_id",
        "oly_enc_id",
        "vero_id",
        "ref_src",
        "cmpid",
        "ncid",
        "sr_share",
        "smid",
        # AT Internet / Piano Analytics campaign parameters, by name: other `at_`
        # parameters (at_page, at_time...) may be a site's own and are kept.
        "at_medium",
        "at_campaign",
        "at_platform",
        "at_creation",
        "at_variant",
        "at_format",
        "at_general_placement",
        "at_detail_placement",
        "at_send_date",
        "at_link",
        "at_link_id",
        "at_link_origin",
        "at_link_type",
        "at_emailtype",
        "at_recipient_id",
        "at_recipient_list",
        "at_type",
        "at_identifier",
        "at_ptag",
        "at_custom1",
        "at_custom2",
        "at_custom3",
        "at_custom4",
        "ito",
        "__twitter_impression",
    }
)
TRACKING_PREFIXES = ("utm_", "pk_", "mtm_")
DEFAULT_PORTS = {"http": 80, "https": 443}


def is_tracking_param(name: str) -> bool:
    lowered = name.lower()
    return lowered in TRACKING_PARAMS or lowered.startswith(TRACKING_PREFIXES)


_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


def _normalise_escapes(text: str) -> str:
    """RFC 3986 6.2.2: `%7E` is `~`, and `%2f` is `%2F`; the other escapes stay."""

    def one(match: re.Match[str]) -> str:
        char = chr(int(match.group(1), 16))
        return char if char in _UNRESERVED else f"%{match.group(1).upper()}"

    return _ESCAPE.sub(one, text)


def _remove_dot_segments(path: str) -> str:
    """`/a/./b/../c` is `/a/c` (RFC 3986 5.2.4), as a browser would request it."""
    if "." not in path:
        return path
    out: list[str] = []
    for segment in path.split("/"):
        if segment == ".":
            continue
        if segment == "..":
            if len(out) > 1:
                out.pop()
            continue
        out.append(segment)
    result = "/".join(out)
    if path.endswith(("/.", "/..")):
        result += "/"
    return result if result.startswith("/") else "/" + result


def _query_name(pair: str) -> str:
    return unquote_plus(pair.split("=", 1)[0])


def canonical_url(url: str) -> str:
    """One key per article, however the link was decorated: scheme and host
    lower-cased, default ports, user names and passwords (`user:pw@`), fragments
    and tracking parameters (`utm_*`, `fbclid`, `gclid`...) removed, escapes and
    dot segments normalised. The path's case and the remaining parameters (order
    and spelling) are kept: servers may care. A non-http(s) or unparsable link
    comes back stripped, not raised."""
    url = url.strip()
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            return url
        port = parts.port
    except ValueError:
        return url
    host = parts.hostname.lower().rstrip(".")
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port is None or port == DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    path = _remove_dot_segments(_normalise_escapes(parts.path)) or "/"
    kept = [p for p in parts.query.split("&") if p and not is_tracking_param(_query_name(p))]
    query = _normalise_escapes("&".join(kept))
    return urlunsplit((scheme, netloc, path, query, ""))
