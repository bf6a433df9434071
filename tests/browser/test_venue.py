"""Issue 9 §5, a dark venue: phones in the dark theme by default when the
device prefers it (a toggle remembered per device), a header naming the
chronicle, the character and the session, "Challenge someone" one tap away
whatever the scroll, older results folded, Log out that asks once, and names
that neither garble nor widen a 360 px screen."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PHONE, TABLET
from tests.browser.test_combat import _by_night
from tests.browser.test_evening import AT_ONCE, SHOTS, Screen, log_in
from tests.browser.test_retests import three_screens

pytestmark = pytest.mark.browser

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: reverses what follows unless isolated
LONG_WORD = "Ph" + "o" * 196 + "ey"  # 200 characters, no break opportunity


def _colour(page: Page, selector: str, prop: str = "background-color") -> str:
    return page.evaluate(f"getComputedStyle(document.querySelector({selector!r}))[{prop!r}]")


def _helen(live, browser, **options) -> Screen:
    context = browser.new_context(**{**PHONE, **options})
    context.set_default_timeout(10_000)
    screen = Screen(context.new_page())
    log_in(screen.page, live("/accounts/login/"), "helen")
    screen.connected()
    return screen


def _play(helen: Screen, grady: Screen, trait: str = "Quick") -> None:
    """Helen challenges Grady, who relents: one more result on both phones."""
    helen.page.get_by_role("radio", name="Grady").check()
    helen.tap(helen.control("button", f"Challenge with {trait} (Physical)"))
    ask = grady.open_card().get_by_text("Relent…", exact=True)  # asks once
    expect(ask).to_be_visible(timeout=AT_ONCE)
    grady.tap(ask)
    grady.tap(grady.open_card().get_by_role("button", name="Yes, relent"))
    expect(helen.open_card()).to_have_count(0, timeout=AT_ONCE)


def test_the_phone_follows_the_devices_dark_preference_and_remembers_its_toggle(live, browser):
    helen = _helen(live, browser, color_scheme="dark")
    page = helen.page
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    dark = _colour(page, "body")
    toggle = helen.control("button", "Dark theme")
    expect(toggle).to_have_attribute("aria-pressed", "true")
    box = toggle.bounding_box()
    assert box["width"] >= 48 and box["height"] >= 48, box
    helen.tap(toggle)
    expect(toggle).to_have_attribute("aria-pressed", "false")
    light = _colour(page, "body")
    assert light != dark and light == "rgb(247, 244, 238)"
    # Remembered on this device: a reload stays light though the device prefers dark.
    page.reload()
    helen.connected()
    assert page.evaluate("document.documentElement.dataset.theme") == "light"
    expect(helen.control("button", "Dark theme")).to_have_attribute("aria-pressed", "false")
    # Another device that prefers light starts light.
    other = _helen(live, browser, color_scheme="light")
    assert other.page.evaluate("document.documentElement.dataset.theme") == "light"
    assert _colour(other.page, "body") == "rgb(247, 244, 238)"
    # It chose nothing, so it follows its device when that switches to dark.
    other.page.emulate_media(color_scheme="dark")
    expect(other.page.locator("html")).to_have_attribute("data-theme", "dark")
    # The first device chose light: it stays light whatever the device says.
    page.emulate_media(color_scheme="light")
    page.emulate_media(color_scheme="dark")
    expect(page.locator("html")).to_have_attribute("data-theme", "light")


def test_the_phone_header_names_chronicle_character_and_session(live, browser, tablet):
    helen = _helen(live, browser)
    header = helen.page.locator("header.bar")
    for part, words in (
        ("character", "Helen"),
        ("chronicle", "Test Chronicle"),
        ("session", "Tonight"),
    ):
        expect(header.locator(f"#phone-header .{part}")).to_have_text(words)
    expect(header.get_by_role("link", name="Narrator")).to_have_count(0)
    narrator = Screen(tablet())
    log_in(narrator.page, live("/accounts/login/?next=/narrate/"), "narrator")
    expect(narrator.page.locator("header.bar").get_by_role("link", name="Narrator")).to_be_visible()


def test_log_out_asks_once(live, browser):
    helen = _helen(live, browser)
    asked = []

    def answer(accept: bool):
        def handle(dialog):
            asked.append(dialog.message)
            dialog.accept() if accept else dialog.dismiss()

        return handle

    helen.page.once("dialog", answer(False))
    helen.tap(helen.control("button", "Log out"))
    expect(helen.page.locator("#phone-header")).to_be_visible()
    helen.page.once("dialog", answer(True))
    helen.tap(helen.control("button", "Log out"))
    expect(helen.page.get_by_role("heading", name="Log in")).to_be_visible()
    assert len(asked) == 2 and all(m.startswith("Log out?") for m in asked)


def test_challenge_someone_is_one_tap_away_and_older_results_fold(live, browser, phone):
    helen = _helen(live, browser)
    grady = Screen(phone())
    grady.page.goto(live(live.ids["grady_join"]))
    grady.connected()
    for trait in ("Quick", "Ferocious", "Brawny", "Quick"):
        _play(helen, grady, trait)
    page = helen.page
    results = page.locator("#done-cards > .card")
    expect(results).to_have_count(4)
    earlier = page.locator("details.earlier > summary")
    expect(earlier).to_match_aria_snapshot("- text: Earlier results (2)")  # the count is CSS
    expect(results.nth(1)).to_be_visible()
    expect(results.nth(2)).to_be_hidden()
    helen.tap(earlier)
    expect(results.nth(3)).to_be_visible()
    helen.tap(earlier)
    expect(results.nth(2)).to_be_hidden()

    # With a challenge open the form is folded: its summary stays on screen wherever she is.
    helen.page.get_by_role("radio", name="Grady").check()
    helen.tap(helen.control("button", "Challenge with Ferocious (Physical)"))
    expect(helen.open_card()).to_have_count(1)
    page.reload()
    helen.connected()
    start = page.locator("details.start")
    expect(start).not_to_have_attribute("open", "")
    summary = page.locator("details.start > summary")
    for where in ("document.body.scrollHeight", "0", "document.body.scrollHeight / 2"):
        page.evaluate(f"window.scrollTo(0, {where})")
        expect(summary).to_be_in_viewport()
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    helen.tap(summary)
    expect(page.get_by_role("radio", name="Grady")).to_be_in_viewport()


def test_a_name_with_a_right_to_left_override_or_a_long_word_cannot_garble_or_widen(
    live, browser, phone
):
    evil = f"{RLO}Grady the {LONG_WORD}"
    with sqlite3.connect(live.db) as db:
        db.execute("UPDATE characters_character SET name = ? WHERE name = 'Grady'", (evil,))
        db.execute(
            "UPDATE characters_trait SET name = ? WHERE name = 'Resilient'", (f"{RLO}Resilient",)
        )
        db.execute("UPDATE characters_chronicle SET name = ?", (f"{RLO}Test {LONG_WORD}",))
    helen = _helen(live, browser)
    grady = Screen(phone())
    grady.page.goto(live(live.ids["grady_join"]))
    grady.connected()
    page = helen.page
    page.get_by_role("radio", name=evil).check()
    page.get_by_label("Attack: a loss costs a health level").check()
    page.locator("details.options > summary").click()
    page.get_by_label("If I win…").fill(f"{RLO}I take your {LONG_WORD}")
    helen.tap(helen.control("button", "Challenge with Ferocious (Physical)"))
    expect(grady.open_card()).to_be_visible(timeout=AT_ONCE)
    grady.tap(grady.control("button", f"Bid {RLO}Resilient"))
    helen.tap(helen.control("button", "Rock"))
    grady.tap(grady.control("button", "Scissors"))
    expect(grady.page.locator("#done-cards .outcome")).to_contain_text("You lose: your")
    expect(page.locator("#done-cards .outcome")).to_contain_text("You win!")
    for screen in (helen, grady):
        width = screen.page.evaluate("document.documentElement.scrollWidth")
        assert width <= 360, f"the page is {width}px wide"
        # Every text holding the override sits inside <bdi> (or is a button's whole
        # label: a button is a paragraph of its own), so it reverses nothing after it.
        loose = screen.page.evaluate(
            """rlo => {
                 const out = [];
                 const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
                 while (walk.nextNode()) {
                   const n = walk.currentNode;
                   if (n.data.includes(rlo) && !n.parentElement.closest('bdi, button'))
                     out.push(n.parentElement.outerHTML.slice(0, 120));
                 }
                 return out;
               }""",
            RLO,
        )
        assert loose == []
        screen.page.screenshot(path=f"{SHOTS}/venue-rlo-{id(screen)}.png", full_page=True)


DOCS_IMG = Path(__file__).resolve().parents[2] / "docs" / "img"


def test_screenshots_of_both_themes_for_the_guide(live, browser, phone, tablet):
    """Both themes on a 360 px phone and the 1024 px tablet, mid-game. Written to
    docs/img/ with NARRATOR_DOCS_SHOTS=1 (``make screenshots``), else to SHOTS."""
    where = DOCS_IMG if os.getenv("NARRATOR_DOCS_SHOTS") else Path(SHOTS)
    where.mkdir(parents=True, exist_ok=True)
    grady = Screen(phone())
    grady.page.goto(live(live.ids["grady_join"]))
    grady.connected()
    for theme in ("dark", "light"):
        helen = _helen(live, browser, color_scheme=theme)
        narrator_context = browser.new_context(**TABLET, color_scheme=theme)
        narrator = Screen(narrator_context.new_page())
        log_in(narrator.page, live("/accounts/login/?next=/narrate/"), "narrator")
        narrator.connected()
        if theme == "dark":
            _play(helen, grady, "Quick")
            helen.page.get_by_role("radio", name="Grady").check()
            helen.tap(helen.control("button", "Challenge with Ferocious (Physical)"))
            expect(grady.open_card()).to_be_visible(timeout=AT_ONCE)
        expect(helen.open_card()).to_contain_text("Waiting on Grady")
        helen.page.screenshot(path=str(where / f"phone-{theme}.png"))
        narrator.page.screenshot(path=str(where / f"tablet-{theme}.png"))
        narrator_context.close()
        helen.page.context.close()


def test_screenshots_of_a_bns_combat_for_the_guide(live, phone, tablet):
    """docs/guide.md "Combat rounds (bns)": a 360 px phone on her initiative in
    a combat round, and the dashboard's Combat block. Written to docs/img/ with
    NARRATOR_DOCS_SHOTS=1 (``make screenshots``), else to SHOTS."""
    where = DOCS_IMG if os.getenv("NARRATOR_DOCS_SHOTS") else Path(SHOTS)
    where.mkdir(parents=True, exist_ok=True)
    _by_night(live)  # initiatives: Helen 7, Grady 6
    helen, _, narrator = three_screens(live, phone, tablet)
    start = narrator.page.get_by_role("group", name="Characters in it (two or more)")
    for name in ("Helen", "Grady"):
        start.get_by_role("checkbox", name=name, exact=True).check()
    narrator.tap(narrator.control("button", "Start the combat"))
    card = helen.page.locator("#combat-phone article.combat")
    expect(card).to_contain_text("Your initiative", timeout=AT_ONCE)
    helen.tap(card.get_by_role("button", name="Move (simple action)"))
    expect(card).to_contain_text("Your initiative: take your standard action", timeout=AT_ONCE)
    block = narrator.page.locator("#combat-dashboard")
    expect(block).to_contain_text("3 steps", timeout=AT_ONCE)
    card.scroll_into_view_if_needed()
    helen.page.screenshot(path=str(where / "combat-phone.png"))
    block.screenshot(path=str(where / "combat-tablet.png"))
