"""Issue 12: a bns combat of three run through the UI of the real app (Daphne,
websockets, Debian's chromium): the 1024x768 tablet starts it (one of the
three arrived after the tablet opened), three 360 px
phones see whose initiative it is, in initiative order (the higher of
Physical and Mental), a Time out in the middle holds the round (the combat
blocks say play is frozen and offer no move until Resume), and one round
advances to the next turn. seeds/002
"Resolving Combat", "Standard and Simple Actions"."""

from __future__ import annotations

import sqlite3

import pytest
from playwright.sync_api import expect

from tests.browser.test_evening import AT_ONCE, SHOTS, Screen, assert_usable, log_in

pytestmark = pytest.mark.browser

# (Physical, Mental): initiative 7, 6 and 9, so Ines acts first, then Helen, then Grady.
SHEETS = {"helen": (7, 3), "grady": (5, 6), "ines": (3, 9)}


def _by_night(live) -> None:
    """The evening's chronicle plays bns: its three characters get Attributes."""
    with sqlite3.connect(live.db) as db:
        db.execute("UPDATE characters_chronicle SET ruleset = 'bns'")
        for name, (physical, mental) in SHEETS.items():
            db.execute(
                "UPDATE characters_character SET physical_attribute = ?, social_attribute = 2,"
                " mental_attribute = ? WHERE id = ?",
                (physical, mental, live.ids[name]),
            )


def _combat(screen: Screen):
    return screen.page.locator("#combat-phone article.combat")


def test_the_tablet_starts_a_combat_of_three_and_phones_follow_one_round(
    live, phone, tablet
) -> None:
    _by_night(live)
    helen, grady, ines = (Screen(phone()) for _ in range(3))
    narrator = Screen(tablet())
    log_in(helen.page, live("/accounts/login/"), "helen")
    grady.page.goto(live(live.ids["grady_join"]))
    log_in(narrator.page, live("/accounts/login/?next=/narrate/"), "narrator")
    narrator.connected()
    # Ines arrives late: she can be ticked at once, without reloading the tablet.
    log_in(ines.page, live("/accounts/login/"), "ines")
    for screen in (helen, grady, ines):
        screen.connected()
    start = narrator.page.get_by_role("group", name="Characters in it (two or more)")
    expect(start.get_by_role("checkbox", name="Ines", exact=True)).to_be_visible(timeout=AT_ONCE)

    # The narrator starts a combat of the three.
    for name in ("Helen", "Grady", "Ines"):
        start.get_by_role("checkbox", name=name, exact=True).check()
    narrator.tap(narrator.control("button", "Start the combat"))
    panel = narrator.page.locator("#combat-dashboard article.combat")
    expect(panel).to_contain_text("Turn 1 · Everyman round", timeout=AT_ONCE)
    expect(panel.locator("li[aria-current=step]")).to_contain_text("Ines")
    expect(panel.locator("ol.combat-order > li")).to_have_count(3)
    expect(panel.locator("ol.combat-order > li").first).to_contain_text("9 Ines")

    # Each phone sees whose initiative it is.
    expect(_combat(ines)).to_contain_text(
        "Your initiative: take your standard and simple action", timeout=AT_ONCE
    )
    for screen in (helen, grady):
        expect(_combat(screen)).to_contain_text("Ines is acting.", timeout=AT_ONCE)
        expect(_combat(screen).get_by_role("button", name="End my initiative")).to_have_count(0)
    ines.page.screenshot(path=f"{SHOTS}/phone-combat.png", full_page=True)
    assert_usable(ines)
    # Helen's panel on the tablet lists the combat, and redraws as it moves on
    # (she is in the middle of the order: the block's data-characters names her).
    narrator.tap(narrator.page.locator("#roster").get_by_role("link", name="Helen"))
    helens = narrator.page.get_by_role("region", name="Character Helen").locator(".panel-combats")
    expect(helens).to_contain_text("place 2 of 3 in the order · Ines is acting", timeout=AT_ONCE)

    # Ines moves with her simple action and ends her initiative: Helen's turn.
    ines.tap(_combat(ines).get_by_role("button", name="Move (simple action)"))
    expect(_combat(ines)).to_contain_text(
        "Your initiative: take your standard action", timeout=AT_ONCE
    )
    expect(panel).to_contain_text("3 steps", timeout=AT_ONCE)
    ines.tap(_combat(ines).get_by_role("button", name="End my initiative"))
    expect(_combat(helen)).to_contain_text("Your initiative", timeout=AT_ONCE)
    expect(_combat(ines)).to_contain_text("Helen is acting.", timeout=AT_ONCE)
    expect(helens).to_contain_text("place 2 of 3 in the order · her initiative", timeout=AT_ONCE)
    narrator.tap(narrator.page.get_by_role("link", name="Close"))
    # A Time out in the middle of Helen's initiative holds the round: every combat
    # block says play is frozen and offers no move (the dashboard keeps only End the
    # combat, a ruling), and the order does not move; Resume brings the moves back.
    narrator.tap(narrator.control("button", "Time out"))
    for screen in (helen, grady, ines):
        expect(screen.page.locator("#time-out")).to_be_visible(timeout=AT_ONCE)
        expect(_combat(screen).locator(".combat-frozen")).to_have_text(
            "Time out: play is frozen. No move until a narrator resumes."
        )
        expect(_combat(screen).get_by_role("button")).to_have_count(0)
    # Nor does Helen's phone still say "Your initiative: take your … action", nor the
    # tablet offer "Start a combat…" (the server refuses both moves now).
    expect(_combat(helen).locator(".combat-status")).to_be_hidden()
    expect(narrator.page.get_by_text("Start a combat…")).to_be_hidden()
    expect(panel.locator(".combat-frozen")).to_be_visible()
    expect(panel.get_by_role("button")).to_have_text(["End the combat"])
    expect(panel.locator("li[aria-current=step]")).to_contain_text("Helen")
    helen.page.screenshot(path=f"{SHOTS}/phone-combat-time-out.png", full_page=True)
    narrator.tap(narrator.control("button", "Resume"))
    for screen in (helen, grady, ines):
        expect(screen.page.locator("#time-out")).to_be_hidden(timeout=AT_ONCE)
        expect(_combat(screen).locator(".combat-frozen")).to_be_hidden()
    expect(_combat(helen)).to_contain_text("Your initiative", timeout=AT_ONCE)
    expect(_combat(helen).locator(".combat-status")).to_be_visible()
    expect(narrator.page.get_by_text("Start a combat…")).to_be_visible()
    expect(_combat(helen).get_by_role("button", name="End my initiative")).to_be_visible()
    expect(panel.get_by_role("button", name="Advance (end Helen's initiative)")).to_be_visible()

    # Helen ends hers; the narrator advances past Grady: turn 2 begins with Ines.
    helen.tap(_combat(helen).get_by_role("button", name="End my initiative"))
    expect(_combat(grady)).to_contain_text("Your initiative", timeout=AT_ONCE)
    expect(panel.locator("li[aria-current=step]")).to_contain_text("Grady", timeout=AT_ONCE)
    narrator.tap(panel.get_by_role("button", name="Advance (end Grady's initiative)"))
    expect(panel).to_contain_text("Turn 2 · Everyman round", timeout=AT_ONCE)
    for screen in (helen, grady, ines):
        expect(_combat(screen)).to_contain_text("Turn 2 · Everyman round", timeout=AT_ONCE)
    expect(_combat(ines)).to_contain_text("Your initiative: take your standard and simple action")
    narrator.page.screenshot(path=f"{SHOTS}/tablet-combat.png", full_page=True)
    assert_usable(narrator)
    assert_usable(helen)
