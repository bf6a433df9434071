"""Issue 13: a storytelling chronicle's sheet of dots on a 360 px phone of the
real app (Daphne, websockets, Debian's chromium): Helen's Attributes and
Skills in dots with a specialty, her Merit, Willpower and seven Health boxes,
tonight's track as the narrator marked it, no challenge form, every control
named and nothing wider than the screen."""

from __future__ import annotations

import sqlite3

import pytest
from playwright.sync_api import expect

from tests.browser.test_evening import SHOTS, Screen, assert_usable, log_in

pytestmark = pytest.mark.browser


def _awakening(live) -> None:
    """The evening's chronicle plays storytelling; Helen has a sheet of dots
    (Strength 3, Brawl 2 with Boxing, Contacts 2), Willpower 5 and tonight
    one lethal and one bashing box marked."""
    with sqlite3.connect(live.db) as db:
        assert db.execute("UPDATE characters_chronicle SET ruleset = 'storytelling'").rowcount
        (helen,) = db.execute("SELECT id FROM characters_character WHERE name = 'Helen'").fetchone()
        db.execute("UPDATE characters_character SET willpower = 5 WHERE id = ?", (helen,))
        db.execute(
            "INSERT INTO characters_storysheet (character_id, strength, health) VALUES (?, 3, 7)",
            (helen,),
        )
        db.execute(
            "INSERT INTO characters_storyskill (character_id, name, dots, specialties) "
            "VALUES (?, 'Brawl', 2, 'Boxing')",
            (helen,),
        )
        db.execute(
            "INSERT INTO characters_merit (character_id, name, dots, note) "
            "VALUES (?, 'Contacts', 2, 'The docks')",
            (helen,),
        )
        db.execute(
            "UPDATE characters_presence SET track_lethal = 1, track_bashing = 1 "
            "WHERE character_id = ?",
            (helen,),
        )


def test_a_storytelling_phone_shows_its_sheet_of_dots(live, phone):
    _awakening(live)
    helen = Screen(phone())
    log_in(helen.page, live("/accounts/login/"), "helen")
    helen.connected()
    sheet = helen.page.locator("#sheet")
    expect(sheet.get_by_label("Strength 3")).to_have_text("Strength •••◦◦")
    expect(sheet.get_by_label("Brawl 2 (Boxing)")).to_have_text("Brawl (Boxing) ••◦◦◦")
    expect(sheet.get_by_label("Contacts 2")).to_contain_text("The docks")
    expect(sheet).to_contain_text("Willpower 5/5")
    # The Health track once, above the sheet (#health), not again inside it.
    expect(helen.page.locator("#health .health-track .box")).to_have_count(7)
    expect(sheet.locator(".health-track")).to_have_count(0)
    expect(helen.page.locator("#health")).to_contain_text("Health 5/7")
    expect(helen.page.locator("#start")).to_be_hidden()
    expect(helen.page.get_by_text("Bid a Trait")).to_have_count(0)
    helen.page.screenshot(path=f"{SHOTS}/phone-storytelling-sheet.png", full_page=True)
    assert_usable(helen)
