"""The two colour sets of static/narrator/narrator.css: every pair of colours
meant to be read together keeps WCAG AA contrast (4.5:1) in both themes, and
body text 7:1 (AAA), the venue being dark and the phones dimmed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CSS = (Path(__file__).resolve().parents[2] / "static" / "narrator" / "narrator.css").read_text()
THEMES = {"light": r":root \{", "dark": r':root\[data-theme="dark"\] \{'}
#: (text, background, least ratio)
PAIRS = [
    ("ink", "paper", 7),
    ("ink", "surface", 7),
    ("muted", "surface", 4.5),
    ("muted", "paper", 4.5),
    ("on-accent", "accent", 4.5),
    ("on-ok", "ok", 4.5),
    ("on-warn", "warn", 4.5),
    ("ok", "surface", 4.5),
    ("warn", "surface", 4.5),
    ("caution", "surface", 4.5),
    ("ink", "notice", 7),
    ("on-bar", "bar", 7),
    ("paper", "ink", 7),  # chosen chips, Trait counts
]


def colours(theme: str) -> dict[str, str]:
    block = re.search(THEMES[theme] + r"([^}]*)\}", CSS)
    assert block, theme
    return dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{6})", block.group(1)))


def luminance(hex_colour: str) -> float:
    def channel(c: int) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize(("text", "background", "least"), PAIRS)
def test_colours_read_together_keep_their_contrast(theme, text, background, least):
    palette = colours(theme)
    ratio = contrast(palette[text], palette[background])
    assert ratio >= least, f"{theme}: {text} on {background} is {ratio:.2f}:1"


def test_both_themes_define_the_same_colours_and_no_colour_is_written_out_elsewhere():
    assert colours("light").keys() == colours("dark").keys()
    rest = re.sub(r":root[^{]*\{[^}]*\}", "", CSS)
    assert re.findall(r"#[0-9a-fA-F]{3,6}\b|rgba?\(", rest) == []


def test_contrast_is_computed_as_wcag_says():
    assert contrast("#000000", "#ffffff") == pytest.approx(21)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)


@pytest.mark.django_db
def test_every_page_names_the_favicon_and_sets_the_theme_before_paint(client):
    from django.contrib.staticfiles import finders

    page = client.get("/accounts/login/").content.decode()
    assert '<link rel="icon" href="/static/narrator/favicon.svg" type="image/svg+xml">' in page
    assert finders.find("narrator/favicon.svg")
    # The theme script runs before the stylesheet loads: no light flash in the dark.
    assert page.index("document.documentElement.dataset.theme") < page.index("narrator.css")
