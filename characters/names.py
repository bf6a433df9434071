"""Names and short texts as they are kept: typed on a phone or in the admin,
they may carry invisible characters that make two names look alike but differ,
or reorder what another screen shows. Plain Python, no Django."""

from __future__ import annotations

import re
import unicodedata

# Zero-width characters (U+200B-U+200D, U+2060, U+FEFF) and bidi controls
# (U+200E/F, U+061C, U+202A-U+202E, U+2066-U+2069): invisible in a name, they
# make two names that look alike differ, or reorder what a screen shows.
INVISIBLE = re.compile("[\u200b-\u200f\u2060\ufeff\u061c\u202a-\u202e\u2066-\u2069]")


def clean_name(name: str) -> str:
    """``name`` as it is kept: Unicode NFC, invisible characters (zero-width,
    bidi controls) removed, any run of whitespace one space, none at the ends.
    "Qu\u200bick\u00a0 Feet " → "Quick Feet"."""
    name = INVISIBLE.sub("", unicodedata.normalize("NFC", str(name)))
    return " ".join(name.split())


def name_key(name: str) -> str:
    """What makes two names on one sheet the same: :func:`clean_name`, any
    case, spaces ignored ("Quick", "quick ", "Qu ick" share one key)."""
    return clean_name(name).casefold().replace(" ", "")


def clean_text(text: str) -> str:
    """A free text (stakes, a ruling's reason) as it is kept: Unicode NFC,
    invisible characters removed, whitespace at the ends stripped."""
    return INVISIBLE.sub("", unicodedata.normalize("NFC", str(text))).strip()
