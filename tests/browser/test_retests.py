"""Issue 10: every way to win or lose a test, played through the UI of the real
app (Daphne, websockets, Debian's chromium) on two 360 px phones and the
1024x768 tablet: a Negative Trait call and an overbid with its second test
(``met_classic``), an ability retest and a Willpower retest (``ukm``).

Each phone offers only the moves ``rules.legal_moves`` lists for its side, in
the games' words; the dashboard shows whose move it is and what was named.
The moves' frames ("challenge.negative", "challenge.add_bid",
"challenge.retest", "challenge.answer", "challenge.accept") are the
consumers' (branch s9-engine): until they are routed those tests skip.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from playwright.sync_api import expect

from challenges.consumers.play import PlayConsumer
from tests.browser.test_evening import AT_ONCE, SHOTS, Screen, assert_usable, log_in

MOVES = {
    "challenge.negative",
    "challenge.add_bid",
    "challenge.retest",
    "challenge.answer",
    "challenge.accept",
}
MISSING = sorted(MOVES - set(PlayConsumer.actions))

pytestmark = pytest.mark.browser
needs_moves = pytest.mark.skipif(bool(MISSING), reason=f"the phone's consumer lacks {MISSING}")


@pytest.fixture
def screens(live, phone, tablet) -> tuple[Screen, Screen, Screen]:
    return three_screens(live, phone, tablet)


def three_screens(live, phone, tablet) -> tuple[Screen, Screen, Screen]:
    """Helen and Grady on 360 px phones, the narrator's dashboard on the
    tablet, all connected (as test_evening's ``evening``)."""
    helen, grady, narrator = Screen(phone()), Screen(phone()), Screen(tablet())
    log_in(helen.page, live("/accounts/login/"), "helen")
    grady.page.goto(live(live.ids["grady_join"]))
    log_in(narrator.page, live("/accounts/login/?next=/narrate/"), "narrator")
    for screen in (helen, grady, narrator):
        screen.connected()
    return helen, grady, narrator


def _sql(live, statement: str, *args) -> int:
    """Run one statement on the live server's database (before play: the
    server reads sheets afresh at each move). Returns the rows changed."""
    with sqlite3.connect(live.db) as db:
        return db.execute(statement, args).rowcount


def _state(live, pk: int) -> dict:
    """Challenge ``pk``'s stored state (``ChallengeState.to_dict``)."""
    with sqlite3.connect(live.db) as db:
        query = "SELECT state FROM challenges_challenge WHERE id = ?"
        (state,) = db.execute(query, (pk,)).fetchone()
    return json.loads(state)


def _columns(live, table: str) -> set[str]:
    with sqlite3.connect(live.db) as db:
        return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def _challenge(helen: Screen, grady: Screen, trait: str, category: str = "Physical") -> int:
    """Helen challenges Grady with ``trait``; returns the challenge's id."""
    helen.tap(helen.control("radio", "Grady"))
    helen.tap(helen.control("button", f"Challenge with {trait} ({category})"))
    card = helen.open_card()
    expect(card).to_contain_text("Waiting on Grady for a bid or relent")
    return int(card.get_attribute("id").removeprefix("card-"))


def test_a_lost_test_offers_only_the_loser_her_retests_and_the_narrator_a_forced_one(live, screens):
    """met_classic: Helen (7 Physical) loses the first test to Grady (3): her
    phone offers the overbid (she has at least double his count, seeds/000
    "Overbidding") and "Accept: you lose", Grady's only waits; the dashboard
    says whose move it is and asks twice before forcing a retest."""
    assert _sql(live, "UPDATE characters_trait SET count = 1 WHERE name = 'Tough'") == 1
    helen, grady, narrator = screens
    pk = _challenge(helen, grady, "Quick")
    grady.tap(grady.control("button", "Bid Resilient"))
    grady.tap(grady.control("button", "Paper"))
    helen.tap(helen.control("button", "Rock"))

    helen_card, grady_card = helen.card(pk), grady.card(pk)
    expect(helen_card.get_by_text("Overbid: risk one more Trait…")).to_be_visible()
    expect(helen_card.get_by_role("button", name="Accept: you lose")).to_be_visible()
    expect(helen_card.get_by_role("button", name="Rock")).to_have_count(0)
    expect(grady_card).to_contain_text(
        "Waiting on Helen for a retest or to accept the result", timeout=AT_ONCE
    )
    expect(grady_card.get_by_role("button")).to_have_count(0)
    expect(grady_card.get_by_text("Overbid: risk one more Trait…")).to_have_count(0)
    helen.tap(helen_card.get_by_text("Overbid: risk one more Trait…"))
    expect(helen_card.get_by_role("spinbutton", name="Traits you declare")).to_have_value("7")
    expect(helen_card.get_by_role("button", name="Overbid with Ferocious")).to_be_visible()
    helen.page.screenshot(path=f"{SHOTS}/phone-overbid.png", full_page=True)
    assert_usable(helen)

    row = narrator.page.locator(f"#challenge-{pk}")
    expect(row).to_contain_text("Waiting on Helen: may retest (Overbid) or accept", timeout=AT_ONCE)
    narrator.tap(row.get_by_role("button", name=f"Force a retest of challenge {pk}"))
    dialog = narrator.page.get_by_role("dialog")
    expect(dialog).to_contain_text(f"Force a retest of #{pk} Helen vs Grady?")
    expect(dialog.get_by_role("textbox", name="Reason")).to_be_focused()
    narrator.page.screenshot(path=f"{SHOTS}/tablet-force-retest.png")
    assert_usable(narrator)
    narrator.tap(dialog.get_by_role("button", name="Cancel"))
    expect(dialog).to_be_hidden()
    expect(row).to_contain_text("Waiting on Helen: may retest (Overbid) or accept")

    # Asked again, with a reason: the test is held again at once.
    narrator.tap(row.get_by_role("button", name=f"Force a retest of challenge {pk}"))
    dialog.get_by_role("textbox", name="Reason").fill("Grady's throw was late")
    narrator.tap(dialog.get_by_role("button", name="Yes, force a retest"))
    expect(dialog).to_be_hidden(timeout=AT_ONCE)
    expect(row).to_contain_text("Test 2 (Narrator's retest)", timeout=AT_ONCE)
    expect(helen_card).to_contain_text("Test 2: Narrator's retest", timeout=AT_ONCE)
    grady.tap(grady.control("button", "Paper"))
    helen.tap(helen.control("button", "Rock"))
    # Lost again: she accepts; nothing more is offered to anyone.
    helen.tap(helen_card.get_by_role("button", name="Accept: you lose"))
    expect(helen_card.get_by_role("status")).to_have_text("You lose: your Quick is lost.")
    expect(row.get_by_role("status")).to_have_text("Grady wins. Helen loses Quick.")
    for screen in (helen, grady):
        expect(screen.card(pk).get_by_role("button")).to_have_count(0)


@needs_moves
def test_a_negative_trait_call_and_an_overbid_with_its_second_test(live, screens):
    """met_classic: Grady names Helen's Clumsy (correct: she adds a Trait);
    Helen loses the first test and overbids (7 Traits against Grady's 3,
    seeds/000 "Overbidding"), risking Ferocious; the second test is hers."""
    assert _sql(live, "UPDATE characters_trait SET count = 1 WHERE name = 'Tough'") == 1
    helen, grady, narrator = screens
    helen.taps = grady.taps = 0
    pk = _challenge(helen, grady, "Quick")
    row = narrator.page.locator(f"#challenge-{pk}")

    grady.tap(grady.control("button", "Bid Resilient"))
    # After both bids either side may name a Negative Trait: free text, no list.
    helen_card, grady_card = helen.card(pk), grady.card(pk)
    expect(grady_card.get_by_text("Name a Negative Trait…")).to_be_visible()
    expect(helen_card.get_by_text("Name a Negative Trait…")).to_be_visible()
    assert "clumsy" not in grady.page.locator("body").inner_text().lower()
    grady.tap(grady_card.get_by_text("Name a Negative Trait…"))
    field = grady_card.get_by_role("textbox", name="Negative Trait of Helen")
    expect(field).to_have_attribute("autocomplete", "off")
    assert field.get_attribute("list") is None
    field.fill("Clumsy")
    grady.tap(grady_card.get_by_role("button", name="Name it"))

    # Correct: Helen must add one more Trait before anyone throws.
    expect(helen_card).to_contain_text(
        "Grady names the Negative Trait Clumsy: correct: you bid one more Trait.", timeout=AT_ONCE
    )
    expect(helen_card.get_by_text("Add one more Trait to your bid")).to_be_visible()
    expect(helen.control("button", "Rock")).to_have_count(0)
    expect(row).to_contain_text("Grady names the Negative Trait Clumsy", timeout=AT_ONCE)
    expect(row).to_contain_text("Waiting on Helen for one more Trait")
    helen.page.screenshot(path=f"{SHOTS}/phone-negative-trait.png", full_page=True)
    assert_usable(helen)
    helen.tap(helen_card.get_by_role("button", name="Add Brawny"))
    expect(helen_card).to_contain_text("You bid Quick, Brawny.")

    # Helen loses the first test: she may overbid or accept.
    grady.tap(grady.control("button", "Paper"))
    helen.tap(helen.control("button", "Rock"))
    expect(helen_card.get_by_text("Overbid: risk one more Trait…")).to_be_visible()
    expect(helen_card.get_by_role("button", name="Accept: you lose")).to_be_visible()
    expect(grady_card).to_contain_text("Waiting on Helen for a retest or to accept the result")
    expect(row).to_contain_text("Waiting on Helen: may retest (Overbid) or accept")
    expect(row.get_by_role("button", name="Force a retest of challenge " + str(pk))).to_be_visible()
    narrator.page.screenshot(path=f"{SHOTS}/tablet-retest.png")
    assert_usable(narrator)
    helen.tap(helen_card.get_by_text("Overbid: risk one more Trait…"))
    expect(helen_card.get_by_role("spinbutton", name="Traits you declare")).to_have_value("7")
    helen.page.screenshot(path=f"{SHOTS}/phone-overbid.png", full_page=True)
    assert_usable(helen)
    helen.tap(helen_card.get_by_role("button", name="Overbid with Ferocious"))

    # Grady answers with his count: 7 is at least double 3, so a second test.
    expect(grady_card).to_contain_text(
        "Helen overbids: risks one more Trait and declares 7 Traits.", timeout=AT_ONCE
    )
    expect(row).to_contain_text("Waiting on Grady to answer an overbid")
    answer = grady_card.get_by_role("spinbutton", name="Your Physical Traits against the overbid")
    expect(answer).to_have_value("3")
    grady.tap(grady_card.get_by_role("button", name="Declare"))
    expect(row).to_contain_text("Test 2 (Overbid, Helen)", timeout=AT_ONCE)
    grady.tap(grady.control("button", "Scissors"))
    helen.tap(helen.control("button", "Rock"))

    # She wins, but the bid of the test she lost is forfeited (seeds/000 "Overbidding").
    expect(helen_card.get_by_role("status")).to_have_text(
        "You win: your Quick and Brawny are lost. Grady loses Resilient."
    )
    expect(grady_card.get_by_role("status")).to_contain_text("You lose")
    expect(helen_card).to_contain_text("Test 2: Overbid (You)")
    expect(row.get_by_role("status")).to_contain_text("Helen wins.")


def test_a_plain_challenge_stays_within_its_tap_budget(live, screens):
    """No retest, no call: the challenger needs at most 5 taps, the defender
    at most 3 (issue 10). Here: Helen 3 (opponent, Trait, throw), Grady 2
    (Trait, throw)."""
    helen, grady, _ = screens
    helen.taps = grady.taps = 0
    pk = _challenge(helen, grady, "Quick")
    grady.tap(grady.control("button", "Bid Tough"))
    grady.tap(grady.control("button", "Rock"))
    helen.tap(helen.control("button", "Paper"))
    expect(helen.card(pk).get_by_role("status")).to_contain_text("You win!")
    assert (helen.taps, grady.taps) == (3, 2)


def test_a_bruised_character_bids_two_traits_to_answer_and_to_challenge(live, screens):
    """met_classic: Bruised or Wounded, she bids two Traits (seeds/000
    "Health"): two boxes and one button, on a card and on "Challenge someone";
    the phone sends both as one list."""
    helen, grady, narrator = screens
    assert (
        _sql(
            live,
            "UPDATE characters_presence SET health = 1 WHERE character_id = "
            "(SELECT id FROM characters_character WHERE name = 'Grady')",
        )
        == 1
    )
    grady.page.reload()
    grady.connected()
    expect(grady.page.locator("section.who")).to_contain_text("Health: Bruised")
    pk = _challenge(helen, grady, "Quick")
    grady_card = grady.card(pk)
    expect(grady_card).to_contain_text("Bruised: bid two Physical Traits", timeout=AT_ONCE)
    expect(grady_card.get_by_role("button", name="Bid Tough")).to_have_count(0)
    grady.page.screenshot(path=f"{SHOTS}/phone-bid-two.png", full_page=True)
    assert_usable(grady)
    grady.tap(grady_card.get_by_role("checkbox", name="Tough ×3"))
    grady.tap(grady_card.get_by_role("checkbox", name="Resilient ×2"))
    grady.tap(grady_card.get_by_role("button", name="Bid these two Traits"))
    expect(helen.card(pk)).to_contain_text("Grady bids Resilient, Tough.", timeout=AT_ONCE)

    # His own challenge asks two Traits as well.
    start = grady.page.get_by_role("group", name="Bid a Trait to challenge")
    expect(start).to_contain_text("Bruised: bid two Traits, then tap Challenge.")
    grady.tap(grady.control("radio", "Helen"))
    grady.tap(start.get_by_role("checkbox", name="Tough").first)
    grady.tap(start.get_by_role("checkbox", name="Resilient"))
    grady.tap(start.get_by_role("button", name="Challenge with two Physical Traits"))
    mine = grady.page.locator("article.card", has_text="against Helen")
    expect(mine).to_contain_text("You bid Resilient, Tough.", timeout=AT_ONCE)


def _ukm(live, *, willpower: int = 0) -> None:
    """The evening's chronicle plays ``ukm``; Grady has ``willpower``."""
    assert _sql(live, "UPDATE characters_chronicle SET ruleset = 'ukm'") == 1
    if willpower:
        if "willpower" not in _columns(live, "characters_character"):
            pytest.skip("the sheet has no Willpower yet (branch s9-sheet)")
        _sql(live, "UPDATE characters_character SET willpower = ? WHERE name = 'Grady'", willpower)


@needs_moves
def test_a_ukm_wrong_call_and_an_announced_overbid(live, screens):
    """ukm with what every sheet has: Helen names a Negative Trait Grady does
    not have (she is one Trait down, seeds/004 "Negative Traits"), loses the
    first test, and overbids by announcing her count; Grady's 3 is not more
    than half of 6, so the second test is held (seeds/004 "Challenge
    Re-Tests")."""
    _ukm(live)
    assert _sql(live, "UPDATE characters_trait SET count = 1 WHERE name = 'Tough'") == 1
    helen, grady, narrator = screens
    pk = _challenge(helen, grady, "Quick")
    helen_card, grady_card = helen.card(pk), grady.card(pk)
    row = narrator.page.locator(f"#challenge-{pk}")
    # ukm: either side may relent until the first test is thrown open.
    expect(helen_card.get_by_text("Relent…")).to_be_visible()
    grady.tap(grady.control("button", "Bid Resilient"))

    helen.tap(helen_card.get_by_text("Name a Negative Trait…"))
    helen_card.get_by_role("textbox", name="Negative Trait of Grady").fill("Cowardly")
    helen.tap(helen_card.get_by_role("button", name="Name it"))
    expect(helen_card).to_contain_text(
        "You name the Negative Trait Cowardly: wrong: you are one Trait down.", timeout=AT_ONCE
    )
    expect(grady_card).to_contain_text("Helen: Cowardly: wrong call −1", timeout=AT_ONCE)
    expect(row).to_contain_text("Helen: Cowardly: wrong call −1", timeout=AT_ONCE)

    grady.tap(grady.control("button", "Paper"))
    helen.tap(helen.control("button", "Rock"))
    helen.tap(helen_card.get_by_text("Overbid: announce your Traits…"))
    announced = helen_card.get_by_role("spinbutton", name="Traits you announce")
    expect(announced).to_have_value("6")  # 7 Physical, one down for the wrong call
    helen.page.screenshot(path=f"{SHOTS}/phone-ukm-overbid.png", full_page=True)
    assert_usable(helen)
    helen.tap(helen_card.get_by_role("button", name="Overbid", exact=True))
    expect(grady_card).to_contain_text("Helen overbids: announces 6 Traits.", timeout=AT_ONCE)
    expect(row).to_contain_text("Waiting on Grady to answer an overbid")
    grady.tap(grady_card.get_by_role("button", name="Declare"))
    expect(row).to_contain_text("Test 2 (Overbid, Helen)", timeout=AT_ONCE)
    grady.tap(grady.control("button", "Scissors"))
    helen.tap(helen.control("button", "Rock"))
    expect(helen_card.get_by_role("status")).to_contain_text("You win")
    expect(row.get_by_role("status")).to_contain_text("Helen wins.")


@needs_moves
def test_a_ukm_ability_retest(live, screens):
    """ukm: Helen loses the first test and retests with Brawl 2; Grady has no
    Ability to answer with, so the retest is held (seeds/004 "Retrying The
    Test In An Ability-Based Challenge")."""
    _ukm(live)
    helen, grady, narrator = screens
    pk = _challenge(helen, grady, "Quick")
    if not _state(live, pk)["challenger"].get("abilities"):
        pytest.skip("the services' combatants carry no Abilities yet (s9-engine with s9-sheet)")
    grady.tap(grady.control("button", "Bid Tough"))
    grady.tap(grady.control("button", "Paper"))
    helen.tap(helen.control("button", "Rock"))
    helen_card, grady_card = helen.card(pk), grady.card(pk)
    helen.tap(helen_card.get_by_role("button", name="Retest with Brawl 2"))
    expect(grady_card).to_contain_text(
        "Helen calls an ability retest with Brawl 2.", timeout=AT_ONCE
    )
    row = narrator.page.locator(f"#challenge-{pk}")
    expect(row).to_contain_text("Waiting on Grady to answer an ability retest")
    grady.page.screenshot(path=f"{SHOTS}/phone-ability-retest.png", full_page=True)
    assert_usable(grady)
    grady.tap(grady_card.get_by_role("button", name="No Ability to answer with"))
    expect(row).to_contain_text("Test 2 (Ability retest, Helen)", timeout=AT_ONCE)
    grady.tap(grady.control("button", "Scissors"))
    helen.tap(helen.control("button", "Rock"))
    expect(helen_card.get_by_role("status")).to_contain_text("You win!")


@needs_moves
def test_a_ukm_willpower_retest(live, screens):
    """ukm: Grady, defending a Social challenge, loses the first test and
    spends Willpower for a final retest (seeds/004)."""
    _ukm(live, willpower=2)
    helen, grady, narrator = screens
    pk = _challenge(helen, grady, "Alluring", "Social")
    if not _state(live, pk)["defender"].get("pools", {}).get("willpower"):
        pytest.skip("the services' combatants carry no Willpower yet (s9-engine with s9-sheet)")
    grady.tap(grady.control("button", "Bid Witty"))
    grady.tap(grady.control("button", "Rock"))
    helen.tap(helen.control("button", "Paper"))
    grady_card = grady.card(pk)
    expect(grady_card.get_by_role("button", name="Spend Willpower: retest (final)")).to_be_visible()
    grady.page.screenshot(path=f"{SHOTS}/phone-willpower.png", full_page=True)
    assert_usable(grady)
    grady.tap(grady_card.get_by_role("button", name="Spend Willpower: retest (final)"))
    row = narrator.page.locator(f"#challenge-{pk}")
    expect(row).to_contain_text("Test 2 (Willpower retest, Grady)", timeout=AT_ONCE)
    grady.tap(grady.control("button", "Paper"))
    helen.tap(helen.control("button", "Rock"))
    # A Willpower retest is final: its winner wins, no retest is offered.
    expect(grady_card.get_by_role("status")).to_contain_text("You win!")
    expect(row.get_by_role("status")).to_contain_text("Grady wins.")
