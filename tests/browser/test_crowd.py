"""A big game on a phone: "Challenge someone" offers a search box instead of
one chip per present character, and a half-filled form survives the views the
server pushes meanwhile."""

from __future__ import annotations

import sqlite3

import pytest
from playwright.sync_api import expect

from tests.browser import test_evening
from tests.browser.test_evening import AT_ONCE, SHOTS, assert_usable

pytestmark = pytest.mark.browser

evening = test_evening.evening  # the same fixture: Helen, Grady and a narrator connected
CROWD = 30  # present besides Helen and Grady: above the chips' threshold (24)


def seat_a_crowd(db, like: int, n: int) -> None:
    """Add ``n`` present characters to the database, copied from character ``like``."""
    with sqlite3.connect(db) as conn:
        for i in range(n):
            cursor = conn.execute(
                "INSERT INTO characters_character (chronicle_id, player_id, name, concept,"
                " health, notes) SELECT chronicle_id, NULL, ?, '', health, ''"
                " FROM characters_character WHERE id = ?",
                (f"Guest {i:02d}", like),
            )
            conn.execute(
                "INSERT INTO characters_presence (session_id, character_id, health, arrived_at)"
                " SELECT session_id, ?, health, arrived_at FROM characters_presence"
                " WHERE character_id = ?",
                (cursor.lastrowid, like),
            )


def test_a_player_finds_her_opponent_by_name_and_keeps_her_form_through_an_update(live, evening):
    helen, grady, _ = evening
    seat_a_crowd(live.db, live.ids["grady"], CROWD)
    helen.page.reload()
    helen.connected()
    search = helen.page.get_by_role("searchbox", name="Find an opponent by name")
    expect(search).to_be_visible()
    expect(helen.page.get_by_role("radio")).to_have_count(0)

    search.fill("gra")
    expect(helen.control("radio", "Grady")).to_be_visible()
    expect(helen.page.get_by_role("radio")).to_have_count(1)
    helen.tap(helen.control("radio", "Grady"))
    helen.tap(helen.page.get_by_text("Stakes (optional)"))
    stakes = helen.page.get_by_label("If I win…")
    stakes.fill("I take your hat")
    helen.page.screenshot(path=f"{SHOTS}/phone-search.png", full_page=True)
    assert_usable(helen)

    # Grady (whose page still shows chips: it was loaded before the crowd came)
    # challenges Helen: her phone gets a whole new view.
    grady.tap(grady.control("radio", "Helen"))
    grady.tap(grady.control("button", "Challenge with Resilient (Physical)"))
    expect(helen.open_card()).to_contain_text("from Grady", timeout=AT_ONCE)

    expect(stakes).to_have_value("I take your hat")
    expect(search).to_have_value("gra")
    expect(helen.control("radio", "Grady")).to_be_checked()

    # And the kept form still opens her challenge.
    helen.tap(helen.control("button", "Challenge with Ferocious (Physical)"))
    mine = helen.page.locator("article.card", has_text="Waiting on Grady for a bid or relent")
    expect(mine).to_contain_text("I take your hat", timeout=AT_ONCE)
    expect(stakes).to_have_value("")  # once done, the form starts blank


def test_a_small_game_still_shows_chips_without_a_search_box(live, evening):
    helen, _, _ = evening
    expect(helen.control("radio", "Grady")).to_be_visible()
    expect(helen.page.get_by_role("searchbox")).to_have_count(0)
