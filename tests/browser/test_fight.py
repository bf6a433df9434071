"""Issue 13: a Storytelling fight of three run through the UI of the real app
(Daphne, websockets, Debian's chromium): the 1024x768 tablet starts it, the
server rolls Initiative (dice scripted through ``dice.json``, see
tests/browser/live_server.py), three 360 px phones play one full turn in
Initiative order (an attack against full Defense, a second attack on the
same target against one less, another action) with every die shown and the
damage on the target's track on every screen, and a Time out in the middle
freezes the fight (the fight blocks say so and offer no move until Resume).
seeds/003 "Combat", "Avoiding Damage in Close Combat", "Marking Damage"."""

from __future__ import annotations

import json
import sqlite3

import pytest
from playwright.sync_api import expect

from tests.browser.test_evening import AT_ONCE, SHOTS, Screen, assert_usable, log_in

pytestmark = pytest.mark.browser

# (Strength, Brawl, Initiative modifier); Health 7 and Defense 2 each.
SHEETS = {"helen": (3, 2, 2), "grady": (2, 1, 1), "ines": (2, 1, 3)}


def _awakening(live) -> None:
    """The evening's chronicle plays the Storytelling System: its three
    characters get sheets of dots and Willpower."""
    with sqlite3.connect(live.db) as db:
        db.execute("UPDATE characters_chronicle SET ruleset = 'storytelling'")
        for name, (strength, brawl, initiative) in SHEETS.items():
            pk = live.ids[name]
            db.execute("UPDATE characters_character SET willpower = 5 WHERE id = ?", (pk,))
            db.execute(
                "INSERT INTO characters_storysheet (character_id, intelligence, wits, resolve,"
                " strength, dexterity, stamina, presence, manipulation, composure, health,"
                " defense, initiative, speed, size, wisdom, armor)"
                " VALUES (?, 2, 2, 2, ?, 2, 2, 2, 2, 2, 7, 2, ?, 9, 5, 7, 0)",
                (pk, strength, initiative),
            )
            db.execute(
                "INSERT INTO characters_storyskill (character_id, name, dots, specialties)"
                " VALUES (?, 'Brawl', ?, '')",
                (pk, brawl),
            )


def _dice(live, *faces: int) -> None:
    """The faces of the server's next roll."""
    live.db.with_name("dice.json").write_text(json.dumps(list(faces)))


def _fight(screen: Screen):
    return screen.page.locator("#fight-phone article.fight")


def test_the_tablet_starts_a_fight_of_three_and_phones_play_one_turn(live, phone, tablet) -> None:
    _awakening(live)
    helen, grady, ines = (Screen(phone()) for _ in range(3))
    narrator = Screen(tablet())
    log_in(helen.page, live("/accounts/login/"), "helen")
    grady.page.goto(live(live.ids["grady_join"]))
    log_in(ines.page, live("/accounts/login/"), "ines")  # she arrives before the tablet opens
    log_in(narrator.page, live("/accounts/login/?next=/narrate/"), "narrator")
    for screen in (narrator, helen, grady, ines):
        screen.connected()

    # The narrator starts a fight of the three (ticked by name: Grady, Helen,
    # Ines); Initiative: Grady 2 + 1 = 3, Helen 8 + 2 = 10, Ines 5 + 3 = 8.
    start = narrator.page.get_by_role("region", name="Fight", exact=True)
    for name in ("Helen", "Grady", "Ines"):
        start.get_by_role("checkbox", name=name, exact=True).check()
    _dice(live, 2, 8, 5)
    narrator.tap(narrator.control("button", "Start the fight"))
    panel = narrator.page.locator("#fight-dashboard article.fight")
    expect(panel).to_contain_text("Turn 1", timeout=AT_ONCE)
    order = panel.locator("ol.combat-order > li")
    expect(order).to_have_count(3)
    expect(order.nth(0)).to_contain_text("10 Helen")
    expect(order.nth(1)).to_contain_text("8 Ines")
    expect(order.nth(2)).to_contain_text("3 Grady")
    expect(panel.locator("li[aria-current=step]")).to_contain_text("Helen")
    expect(panel.locator(".fight-rolls")).to_contain_text("Initiative: 8 + 2 = 10")

    expect(_fight(helen)).to_contain_text("Your turn: take your action", timeout=AT_ONCE)
    for screen in (grady, ines):
        expect(_fight(screen)).to_contain_text("Helen is acting.", timeout=AT_ONCE)
        expect(_fight(screen).get_by_role("button", name="Attack", exact=True)).to_have_count(0)
        expect(_fight(screen).get_by_role("button", name="Dodge", exact=False)).to_be_visible()

    # Helen punches Grady: Strength 3 + Brawl 2 − his Defense 2 = 3 dice: 8, 9, 3.
    attack = _fight(helen).get_by_role("form", name="Attack")
    attack.get_by_label("Target").select_option(label="Grady")
    _dice(live, 8, 9, 3)
    helen.tap(attack.get_by_role("button", name="Attack", exact=True))
    graded = "Helen attacks Grady (unarmed, Defense 2): 2 bashing: Grady's track //·····"
    for screen in (helen, grady, ines):
        expect(_fight(screen)).to_contain_text(graded, timeout=AT_ONCE)
        expect(_fight(screen).locator(".fight-roll").first.locator("li.die")).to_have_count(3)
    expect(panel).to_contain_text(graded, timeout=AT_ONCE)
    expect(panel.locator("li[data-fighter]").nth(2)).to_contain_text("Defense 1")
    expect(_fight(ines)).to_contain_text("Your turn: take your action", timeout=AT_ONCE)
    helen.page.screenshot(path=f"{SHOTS}/phone-fight.png", full_page=True)
    assert_usable(helen)

    # A Time out freezes the fight: no move on any phone, only End the fight on
    # the tablet, and Ines is still the one to act after Resume.
    narrator.tap(narrator.control("button", "Time out"))
    for screen in (helen, grady, ines):
        expect(screen.page.locator("#time-out")).to_be_visible(timeout=AT_ONCE)
        expect(_fight(screen).locator(".combat-frozen")).to_have_text(
            "Time out: play is frozen. No move until a narrator resumes."
        )
        expect(_fight(screen).locator(".combat-play")).to_be_hidden()
    expect(panel.locator(".combat-frozen")).to_be_visible()
    expect(panel.get_by_role("button", name="End the fight")).to_be_visible()
    expect(panel.get_by_role("button", name="End the turn")).to_be_hidden()
    ines.page.screenshot(path=f"{SHOTS}/phone-fight-time-out.png", full_page=True)
    narrator.tap(narrator.control("button", "Resume"))
    for screen in (helen, grady, ines):
        expect(screen.page.locator("#time-out")).to_be_hidden(timeout=AT_ONCE)
        expect(_fight(screen).locator(".combat-frozen")).to_be_hidden()
    expect(panel.locator("li[aria-current=step]")).to_contain_text("Ines")

    # Ines hits Grady with a knife-hand: his Defense is one less now. Strength 2 +
    # Brawl 1 − 1 = 2 dice: 10 (rolled again: 8) and 4 → 2 lethal, pushing the
    # bashing right.
    attack = _fight(ines).get_by_role("form", name="Attack")
    attack.get_by_label("Target").select_option(label="Grady")
    attack.get_by_label("Damage").select_option(label="Lethal")
    _dice(live, 10, 4, 8)
    ines.tap(attack.get_by_role("button", name="Attack", exact=True))
    hit = "Ines attacks Grady (unarmed, Defense 1): 2 lethal: Grady's track XX//···"
    for screen in (helen, grady, ines):
        expect(_fight(screen)).to_contain_text(hit, timeout=AT_ONCE)
    expect(_fight(grady).locator(".fight-roll").first.locator("li.die.reroll")).to_have_count(1)
    expect(panel).to_contain_text("XX//···", timeout=AT_ONCE)

    # Grady's turn: another action; the turn is over and turn 2 begins with Helen.
    expect(_fight(grady)).to_contain_text("Your turn: take your action", timeout=AT_ONCE)
    grady.tap(_fight(grady).get_by_role("button", name="Another action"))
    expect(panel).to_contain_text("Turn 2", timeout=AT_ONCE)
    expect(panel.locator("li[aria-current=step]")).to_contain_text("Helen")
    for screen in (helen, grady, ines):
        expect(_fight(screen)).to_contain_text("Turn 2", timeout=AT_ONCE)
    expect(_fight(helen)).to_contain_text("Your turn: take your action")
    narrator.page.screenshot(path=f"{SHOTS}/tablet-fight.png", full_page=True)
    assert_usable(narrator)
    assert_usable(grady)
