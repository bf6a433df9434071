"""Issue 11 section 4 in a real browser: a 360 px phone challenges the demo's
auto-answering NPC (the spirit "Pattern Spider" of ``manage.py demo``, with
its demo sheet) and sees it bid, throw and lose or win; the narrator's
tablet marks it "NPC" and plays it from its panel."""

from __future__ import annotations

import re
import sqlite3

import pytest
from playwright.sync_api import expect

from characters.management.commands.demo import SHEETS
from tests.browser.test_evening import AT_ONCE, SHOTS, Screen, assert_usable, log_in

pytestmark = pytest.mark.browser

NPC = next(sheet for sheet in SHEETS if sheet.name == "Pattern Spider")


def _add_demo_npc(live) -> int:
    """The demo's auto-answering spirit, its sheet and its presence tonight,
    written into the live server's database (it reads sheets at each move)."""
    with sqlite3.connect(live.db) as db:
        (chronicle,) = db.execute(
            "SELECT chronicle_id FROM characters_gamesession WHERE id = ?", (live.ids["session"],)
        ).fetchone()
        pk = db.execute(
            "INSERT INTO characters_character (chronicle_id, player_id, name, concept, health, "
            "notes, auto_answer, relents) VALUES (?, NULL, ?, ?, 0, '', 1, 'never')",
            (chronicle, NPC.name, NPC.concept),
        ).lastrowid
        db.executemany(
            "INSERT INTO characters_trait (character_id, name, category, count, negative, stamina) "
            "VALUES (?, ?, ?, ?, ?, 0)",
            [(pk, name, c.value, n, negative) for name, c, n, negative in NPC.traits],
        )
        db.execute(
            "INSERT INTO characters_presence (session_id, character_id, health, arrived_at) "
            "VALUES (?, ?, 0, CURRENT_TIMESTAMP)",
            (live.ids["session"], pk),
        )
    return pk


def test_a_phone_challenges_the_demos_auto_answering_npc(live, phone, tablet):
    npc = _add_demo_npc(live)
    helen = Screen(phone())
    log_in(helen.page, live("/accounts/login/"), "helen")
    helen.connected()

    helen.tap(helen.control("radio", NPC.name))
    helen.tap(helen.control("button", "Challenge with Ferocious (Physical)"))
    card = helen.open_card()
    # It answered at once with its best Physical Trait (Quick ×2, first on the sheet).
    expect(card).to_contain_text(f"{NPC.name} bids Quick", timeout=AT_ONCE)
    pk = int(card.get_attribute("id").removeprefix("card-"))
    helen.tap(helen.control("button", "Rock"))

    # Its throw is random: a tie asks Helen to declare (7 against its 4), a
    # lost test lets her accept; either way the challenge ends on her phone.
    mine = helen.card(pk)
    expect(mine).to_contain_text(re.compile(f"{NPC.name} threw (Rock|Paper|Scissors)"))
    declare = mine.get_by_role("button", name="Declare")
    accept = mine.get_by_role("button", name="Accept: you lose")
    if declare.count():
        helen.tap(declare)
    elif accept.count():
        helen.tap(accept)
    expect(mine.get_by_role("status")).to_have_text(re.compile(r"^You (win|lose)"))
    helen.page.screenshot(path=f"{SHOTS}/phone-npc.png", full_page=True)
    assert_usable(helen)

    # The narrator's tablet marks it as an NPC and opens its phone screen.
    narrator = Screen(tablet())
    log_in(narrator.page, live("/accounts/login/?next=/narrate/"), "narrator")
    narrator.connected()
    roster = narrator.page.locator(f"#roster-{npc}")
    expect(roster).to_contain_text("NPC · auto")
    expect(narrator.page.locator(f"#challenge-{pk}")).to_be_visible()
    # Its panel switches auto-answer off, at once on the roster.
    narrator.tap(roster.get_by_role("link", name=NPC.name))
    panel = narrator.page.locator("#character-panel")
    expect(panel).to_contain_text("NPC: run by the narrators")
    expect(panel.get_by_role("link", name=f"Play {NPC.name}")).to_be_visible()
    settings = panel.get_by_role("form", name=f"{NPC.name}: auto-answer")
    narrator.tap(settings.get_by_role("checkbox", name="Auto-answer"))
    narrator.tap(settings.get_by_role("button", name="Save"))
    expect(roster).not_to_contain_text("auto", timeout=AT_ONCE)
    expect(panel.locator(".npc-auto")).to_have_text("off", timeout=AT_ONCE)
    narrator.page.screenshot(path=f"{SHOTS}/tablet-npc-panel.png")
    assert_usable(narrator)
    narrator.page.goto(live(f"/play/{npc}/"))
    narrator.connected()
    expect(narrator.page.locator("#phone-header")).to_contain_text("played by a narrator")
