"""The admin on the narrator's 1024×768 tablet (Daphne, Debian's chromium):
a character's page, Traits inline included, fits without scrolling sideways."""

from __future__ import annotations

import sqlite3

import pytest
from playwright.sync_api import expect

from tests.browser.test_evening import SHOTS, log_in

pytestmark = pytest.mark.browser


def _staff(live, username: str) -> None:
    """``username`` may use the admin (a superuser: every column it can show)."""
    with sqlite3.connect(live.db) as db:
        changed = db.execute(
            "UPDATE auth_user SET is_staff = 1, is_superuser = 1 WHERE username = ?", (username,)
        ).rowcount
    assert changed == 1


def test_a_characters_page_fits_a_tablet(live, tablet):
    _staff(live, "narrator")
    page = tablet()
    helen = f"/admin/characters/character/{live.ids['helen']}/change/"
    log_in(page, live(f"/admin/login/?next={helen}"), "narrator")

    expect(page.locator("#traits-group")).to_be_visible()
    page.screenshot(path=f"{SHOTS}/tablet-admin-character.png", full_page=True)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1024, f"the page is {width} px wide"
    # The admin wraps a wide inline (Traits: 779 px in 685) in a box that
    # scrolls sideways, hiding Negative and Delete: every column is in view.
    hidden = page.evaluate(
        "[...document.querySelectorAll('.inline-group, .inline-group *')]"
        ".filter(e => e.scrollWidth > e.clientWidth + 1)"
        ".map(e => `${e.tagName}.${e.className}: ${e.scrollWidth} > ${e.clientWidth}`)"
    )
    assert hidden == []
