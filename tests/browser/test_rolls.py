"""Issue 13: storytelling rolls through the UI of the real app (Daphne,
websockets, Debian's chromium) on two 360 px phones and the 1024x768 tablet:
Helen contests Grady from her phone, Grady resists from his, and both phones
and the dashboard show both rolls die by die and who won; the narrator starts
an extended action for Helen, her phone counts down to her next roll, and a
Time out in the middle stops the countdown and her Roll button until Resume.

The server rolls with ``secrets`` in its own process: the dice each screen
shows are compared with the roll it logged (``challenges_diceroll``)."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest
from playwright.sync_api import expect

from tests.browser.test_evening import AT_ONCE, SHOTS, assert_usable
from tests.browser.test_retests import three_screens

pytestmark = pytest.mark.browser


def _awakening(live) -> None:
    """The evening's chronicle rolls dice pools: Helen (Dexterity 3, Stealth
    2, Willpower 5) and Grady (Wits 3, Willpower 3) on sheets of dots."""
    with sqlite3.connect(live.db) as db:
        assert db.execute("UPDATE characters_chronicle SET ruleset = 'storytelling'").rowcount
        for name, sheet, willpower in (("Helen", "dexterity", 5), ("Grady", "wits", 3)):
            (pk,) = db.execute(
                "SELECT id FROM characters_character WHERE name = ?", (name,)
            ).fetchone()
            db.execute(
                "UPDATE characters_character SET willpower = ? WHERE id = ?", (willpower, pk)
            )
            db.execute(
                f"INSERT INTO characters_storysheet (character_id, {sheet}, health) "
                "VALUES (?, 3, 7)",
                (pk,),
            )
        db.execute(
            "INSERT INTO characters_storyskill (character_id, name, dots, specialties) "
            "SELECT id, 'Stealth', 2, '' FROM characters_character WHERE name = 'Helen'"
        )


def _logged(live) -> dict:
    """The newest roll as the server logged it: ``{"pk", "result"}``."""
    with sqlite3.connect(live.db) as db:
        pk, result = db.execute(
            "SELECT id, result FROM challenges_diceroll ORDER BY id DESC LIMIT 1"
        ).fetchone()
    return {"pk": pk, "result": json.loads(result) if result else None}


def _faces(roll: dict) -> list[str]:
    return [str(face) for face, _, _ in roll["dice"]]


def test_a_contested_roll_between_two_phones_shows_each_die(live, phone, tablet):
    _awakening(live)
    helen, grady, narrator = three_screens(live, phone, tablet)
    start = helen.page.locator("#roll-start")
    helen.tap(start.get_by_text("Contest someone"))
    start.get_by_label("Against").select_option(label="Grady")
    start.get_by_label("Attribute", exact=True).select_option("Dexterity")
    start.get_by_label("Skill", exact=True).select_option("Stealth")
    start.get_by_label("What you try").fill("Slip past Grady")
    helen.tap(start.get_by_role("button", name="Contest"))

    pk = None
    resist = grady.page.get_by_role("button", name="Resist and roll")
    expect(resist).to_be_visible(timeout=AT_ONCE)
    pk = _logged(live)["pk"]
    helen_card, grady_card = (s.page.locator(f"#roll-{pk}") for s in (helen, grady))
    expect(helen_card).to_contain_text("Waiting for Grady to choose a pool to resist.")
    grady_card.get_by_label("Attribute of Grady").select_option("Wits")
    grady.tap(resist)

    expect(grady_card.locator(".roll-verdict")).to_be_visible(timeout=AT_ONCE)
    logged = _logged(live)["result"]
    first, second = logged["rolls"][-1]
    faces = _faces(first) + _faces(second)
    winner = {"challenger": "Helen wins.", "defender": "Grady wins.", None: "A tie"}
    verdict = winner[logged["winner"]]
    board_row = narrator.page.locator(f"#roll-dashboard #roll-{pk}")
    for card in (helen_card, grady_card, board_row):
        expect(card.locator(".die")).to_have_text(faces, timeout=AT_ONCE)
        expect(card.locator(".roll-verdict")).to_contain_text(verdict)
        expect(card).to_contain_text("Dexterity 3 + Stealth 2 = 5 dice")
        expect(card).to_contain_text("Wits 3 = 3 dice")
    # On the tablet the roll runs in the wide column, above the forms beside it.
    board = narrator.page.locator("#roll-dashboard").bounding_box()
    forms = narrator.page.get_by_role("region", name="Dice rolls").bounding_box()
    assert board["y"] <= forms["y"], (board, forms)
    assert board["width"] > forms["width"], (board, forms)
    helen.page.screenshot(path=f"{SHOTS}/phone-storytelling-contest.png", full_page=True)
    assert_usable(helen)
    assert_usable(grady)


def test_an_extended_action_counts_down_and_stops_during_a_time_out(live, phone, tablet):
    _awakening(live)
    helen, _grady, narrator = three_screens(live, phone, tablet)
    board = narrator.page
    form = board.locator("form:has(input[value='roll.extended'])")
    narrator.tap(board.get_by_text("Extended action…"))
    form.get_by_label("Character").select_option(label="Helen")
    form.get_by_label("Attribute", exact=True).select_option("Dexterity")
    form.get_by_label("Skill", exact=True).select_option("Stealth")
    form.get_by_label("Target (successes)").fill("20")
    form.get_by_label("Minutes per roll").fill("10")
    form.get_by_label("Most rolls").fill("3")
    form.get_by_label("What she does").fill("Pick the lock")
    narrator.tap(form.get_by_role("button", name="Start the extended action"))

    card = helen.page.locator("article.roll-extended")
    expect(card).to_contain_text("Helen: Pick the lock", timeout=AT_ONCE)
    expect(card).to_contain_text("0 of 20 successes")
    expect(card.locator(".roll-next")).to_have_text("now")
    roll = card.get_by_role("button", name="Roll Dexterity + Stealth (5 dice)")
    helen.tap(roll)
    expect(card.locator(".die").first).to_be_visible(timeout=AT_ONCE)
    logged = _logged(live)["result"]
    expect(card.locator(".die")).to_have_text(_faces(logged["rolls"][0]))
    expect(card).to_contain_text(f"{logged['rolls'][0]['successes']} of 20 successes")
    # Ten minutes to the next roll, thirty (three rolls) to the end of the time allowed.
    expect(card.locator(".roll-next")).to_have_text(re.compile(r"^9:5\d$"), timeout=AT_ONCE)
    expect(card.locator(".roll-end")).to_have_text(re.compile(r"^29:5\d$"))
    helen.tap(card.get_by_role("button", name="Roll Dexterity + Stealth (5 dice)"))
    expect(helen.page.locator("#notice")).to_contain_text("Your next roll is in", timeout=AT_ONCE)

    narrator.tap(narrator.control("button", "Time out"))
    expect(helen.page.locator("#time-out")).to_be_visible(timeout=AT_ONCE)
    expect(card.locator(".roll-frozen")).to_be_visible()
    expect(card.get_by_role("button", name="Roll Dexterity + Stealth (5 dice)")).to_have_css(
        "opacity", "0.35"
    )
    stopped = card.locator(".roll-next").inner_text()
    helen.page.wait_for_timeout(2_500)  # the countdown must not move while play is stopped
    expect(card.locator(".roll-next")).to_have_text(stopped)
    helen.tap(card.get_by_role("button", name="Roll Dexterity + Stealth (5 dice)"))
    expect(helen.page.locator("#notice")).to_contain_text("Time out", timeout=AT_ONCE)
    helen.page.screenshot(path=f"{SHOTS}/phone-storytelling-extended.png", full_page=True)

    narrator.tap(narrator.control("button", "Resume"))
    expect(card.locator(".roll-frozen")).to_be_hidden(timeout=AT_ONCE)
    expect(card.locator(".roll-next")).not_to_have_text(stopped, timeout=AT_ONCE)
    assert len(_logged(live)["result"]["rolls"]) == 1  # nothing rolled during the Time out
    assert_usable(helen)
