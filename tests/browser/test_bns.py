"""Issue 12: a By Night Studios chronicle (``bns``, seeds/002) plays an
opposed test of test pools through the UI of the real app (Daphne,
websockets, Debian's chromium) on two 360 px phones and the 1024x768 tablet:
Helen brawls Grady, Grady chooses his defence, both pools show on both
phones, Helen loses the first test and spends 1 Willpower to retest (only
her phone offers it), wins the final test, and Grady's wound boxes, Helen's
Willpower and the narrators' row follow at once."""

from __future__ import annotations

import sqlite3

import pytest
from playwright.sync_api import expect

from tests.browser.test_evening import AT_ONCE, SHOTS, Screen, assert_usable
from tests.browser.test_retests import three_screens

pytestmark = pytest.mark.browser


def _sql(live, statement: str, *args) -> int:
    """Run one statement on the live server's database (before the pages open)."""
    with sqlite3.connect(live.db) as db:
        return db.execute(statement, args).rowcount


def _by_night(live) -> None:
    """The evening's chronicle plays bns: Helen (Physical 7, Brawl 2,
    Willpower 3: a brawl pool of 9), Grady (Physical 5, no Dodge, Willpower
    2: a Dodge defence of 5)."""
    assert _sql(live, "UPDATE characters_chronicle SET ruleset = 'bns'") == 1
    sheet = (
        "UPDATE characters_character SET physical_attribute = ?, social_attribute = ?, "
        "mental_attribute = ?, willpower = ? WHERE name = ?"
    )
    assert _sql(live, sheet, 7, 3, 4, 3, "Helen") == 1
    assert _sql(live, sheet, 5, 2, 2, 2, "Grady") == 1


@pytest.fixture
def screens(live, phone, tablet) -> tuple[Screen, Screen, Screen]:
    _by_night(live)
    return three_screens(live, phone, tablet)


def test_an_opposed_test_with_a_willpower_retest(live, screens):
    helen, grady, narrator = screens
    helen.taps = grady.taps = 0
    # Two taps open it: the opponent, then the attack (its pool on the button).
    helen.tap(helen.control("radio", "Grady"))
    helen.tap(helen.control("button", "Attack: Brawl (pool 9)"))
    card = helen.open_card()
    expect(card).to_contain_text("Waiting on Grady to choose a defence")
    pk = int(card.get_attribute("id").removeprefix("card-"))
    helen_card, grady_card = helen.card(pk), grady.card(pk)
    row = narrator.page.locator(f"#challenge-{pk}")
    expect(row).to_contain_text("Waiting on Grady to choose a defence", timeout=AT_ONCE)

    grady.tap(grady_card.get_by_role("button", name="Defend: Physical + Dodge (5)"))
    pools = "Pools: Helen 9 (Brawl) vs Grady 5 (Physical + Dodge)"
    for where in (helen_card, grady_card, row):
        expect(where).to_contain_text(pools, timeout=AT_ONCE)

    helen.tap(helen_card.get_by_role("button", name="Rock"))
    grady.tap(grady_card.get_by_role("button", name="Paper"))
    # Helen lost the first test: only her phone offers the Willpower retest.
    retest = helen_card.get_by_role("button", name="Spend 1 Willpower to retest")
    expect(retest).to_be_visible(timeout=AT_ONCE)
    expect(helen_card.get_by_role("button", name="Accept: you lose the test")).to_be_visible()
    expect(grady_card).to_contain_text("Waiting on Helen to retest with Willpower or accept")
    expect(grady_card.get_by_role("button")).to_have_count(0)
    expect(row).to_contain_text("Test 1: Rock vs Paper, Grady wins")
    helen.page.screenshot(path=f"{SHOTS}/phone-bns-retest.png", full_page=True)
    assert_usable(helen)
    # A Time out dims the card's buttons as it dims a MET card's (narrator.css:
    # a tap gets the server's refusal in words); Resume brings them back.
    narrator.tap(narrator.control("button", "Time out"))
    expect(helen.page.locator("#time-out")).to_be_visible(timeout=AT_ONCE)
    expect(retest).to_have_css("opacity", "0.35")
    narrator.tap(narrator.control("button", "Resume"))
    expect(helen.page.locator("#time-out")).to_be_hidden(timeout=AT_ONCE)
    expect(retest).to_have_css("opacity", "1")

    helen.tap(retest)
    expect(helen.page.locator("#sheet")).to_contain_text("Willpower 2/3", timeout=AT_ONCE)
    helen.tap(helen_card.get_by_role("button", name="Scissors"))
    grady.tap(grady_card.get_by_role("button", name="Paper"))

    result = "Success: Grady takes 1 damage."
    for where in (helen_card, row):
        expect(where).to_contain_text(result, timeout=AT_ONCE)
    expect(grady_card).to_contain_text("You lose to Helen: you take 1 damage.", timeout=AT_ONCE)
    expect(row).to_contain_text("Willpower spent: Helen 1")
    expect(row).to_contain_text("Test 2 (Willpower retest, Helen): Scissors vs Paper, Helen wins")
    expect(grady.page.locator("#sheet .wound-healthy")).to_have_attribute(
        "aria-label", "Healthy: 1 of 3 boxes filled", timeout=AT_ONCE
    )
    expect(narrator.page.locator("#roster")).to_contain_text("WP 2/3")
    grady.page.screenshot(path=f"{SHOTS}/phone-bns-result.png", full_page=True)
    narrator.page.screenshot(path=f"{SHOTS}/tablet-bns-result.png")
    for screen in (helen, grady, narrator):
        assert_usable(screen)
    # The challenger's path: opponent, attack, two throws and the retest.
    assert helen.taps <= 5, f"the challenger needed {helen.taps} taps"
    assert grady.taps <= 3, f"the defender needed {grady.taps} taps"
