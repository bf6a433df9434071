"""Issue 9, section 1: a narrator starts a new session from the dashboard (behind
a confirmation naming it) and every open phone and dashboard moves over
without a reload; ending it shows "No session tonight". Who is here: a
character on a break or absent, and the opponent list current when opened."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.test_evening import (
    AT_ONCE,
    SHOTS,
    Screen,
    assert_usable,
    category_count,
    log_in,
)

pytestmark = pytest.mark.browser


def _narrator(live, tablet) -> Screen:
    screen = Screen(tablet())
    log_in(screen.page, live("/accounts/login/?next=/narrate/"), "narrator")
    screen.connected()
    return screen


def _confirm(screen: Screen, summary: str, button: str) -> None:
    """Open the confirmation whose summary reads ``summary`` and press ``button``."""
    screen.tap(screen.page.locator("summary", has_text=summary))
    screen.tap(screen.control("button", button))


def test_a_session_started_on_one_tablet_moves_two_phones_and_two_tablets(live, phone, tablet):
    helen = Screen(phone())
    log_in(helen.page, live("/accounts/login/"), "helen")
    grady = Screen(phone())
    grady.page.goto(live(live.ids["grady_join"]))
    first, second = _narrator(live, tablet), _narrator(live, tablet)
    for screen in (helen, grady):
        screen.connected()
    old_url = first.page.url
    expect(first.page.locator("h1")).to_contain_text("Tonight")

    # Grady loses Resilient and a health level; a second challenge stays open.
    helen.tap(helen.control("radio", "Grady"))
    helen.tap(helen.control("checkbox", "Attack: a loss costs a health level"))
    helen.tap(helen.control("button", "Challenge with Ferocious (Physical)"))
    grady.tap(grady.control("button", "Bid Resilient"))
    grady.tap(grady.control("button", "Scissors"))
    helen.tap(helen.control("button", "Rock"))
    expect(grady.sheet().locator("s.lost")).to_have_text("Resilient")
    expect(grady.page.locator("section.who")).to_contain_text("Health: Bruised")
    helen.tap(helen.control("radio", "Grady"))
    helen.tap(helen.control("button", "Challenge with Quick (Physical)"))
    expect(grady.open_card()).to_contain_text("from Helen")

    # The confirmation names the session it starts.
    first.tap(first.page.locator("summary", has_text="Start session 2"))
    expect(first.page.locator("details.session-start")).to_contain_text(
        "Start session 2: every lost Trait comes back"
    )
    first.page.screenshot(path=f"{SHOTS}/tablet-start-session.png")
    assert_usable(first)
    first.tap(first.control("button", "Yes, start session 2"))

    # Both tablets are on the new session's dashboard, nobody having reloaded.
    for tablet_screen in (first, second):
        expect(tablet_screen.page.locator("h1")).to_contain_text("Session 2 · ", timeout=AT_ONCE)
        assert tablet_screen.page.url != old_url
        tablet_screen.connected()
        expect(tablet_screen.page.locator("#challenge-list article")).to_have_count(0)
    # Both phones: the new label, every Trait and health level back, no card left.
    for phone_screen in (helen, grady):
        expect(phone_screen.page.locator("section.who")).to_contain_text(
            "Session 2 · ", timeout=AT_ONCE
        )
        expect(phone_screen.page.locator("article.card")).to_have_count(0)
    expect(grady.sheet().locator("s.lost")).to_have_count(0)
    expect(category_count(grady, "Physical")).to_have_text("5")
    expect(grady.page.locator("section.who")).to_contain_text("Health: Healthy")
    grady.page.screenshot(path=f"{SHOTS}/phone-new-session.png", full_page=True)
    # Play goes on in the new session from the same pages.
    helen.tap(helen.control("radio", "Grady"))
    helen.tap(helen.control("button", "Challenge with Ferocious (Physical)"))
    expect(grady.open_card()).to_contain_text("from Helen", timeout=AT_ONCE)
    expect(second.page.locator("#challenge-list article")).to_have_count(1, timeout=AT_ONCE)

    # End session: phones show "No session tonight", the tablet offers session 3.
    _confirm(second, "End session", "Yes, end session 2")
    for phone_screen in (helen, grady):
        expect(
            phone_screen.page.locator("#live .notice", has_text="No session tonight")
        ).to_be_visible(timeout=AT_ONCE)
        expect(phone_screen.page.locator("#start")).to_be_hidden()
    expect(first.page.locator("summary", has_text="Start session 3")).to_be_visible()
    helen.page.screenshot(path=f"{SHOTS}/phone-no-session.png", full_page=True)

    # A phone opened between sessions gets the whole screen when the next starts.
    helen.page.reload()
    helen.connected()
    expect(helen.page.locator("#live .notice", has_text="No session tonight")).to_be_visible()
    _confirm(first, "Start session 3", "Yes, start session 3")
    expect(helen.page.locator("section.who")).to_contain_text("Session 3 · ", timeout=AT_ONCE)
    expect(helen.control("radio", "Grady")).to_be_visible()
    expect(first.page.locator("h1")).to_contain_text("Session 3 · ", timeout=AT_ONCE)
    first.connected()
    first.tap(first.control("button", "Time out"))
    expect(helen.page.locator("#time-out")).to_be_visible(timeout=AT_ONCE)


def test_breaks_absences_and_arrivals_show_where_they_should(live, phone, tablet):
    helen = Screen(phone())
    log_in(helen.page, live("/accounts/login/"), "helen")
    grady = Screen(phone())
    grady.page.goto(live(live.ids["grady_join"]))
    narrator = _narrator(live, tablet)
    for screen in (helen, grady):
        screen.connected()
    chips = helen.page.locator("#opponent-results label.chip")
    expect(chips).to_have_text(["Grady"])
    start = helen.page.locator("details.start > summary")

    # The narrator has picked Helen for a static challenge and a simple test.
    picks = [narrator.page.locator(f"#{name}-character") for name in ("static", "simple")]
    for pick in picks:
        pick.select_option(label="Helen")

    # Ines arrives: Helen sees her the next time she opens "Challenge someone".
    ines = Screen(phone())
    log_in(ines.page, live("/accounts/login/"), "ines")
    ines.connected()
    for pick in picks:  # Ines can be picked at once; the narrator's pick stays Helen
        expect(pick.locator("option")).to_have_text(["Grady", "Helen", "Ines"], timeout=AT_ONCE)
        expect(pick).to_have_value(str(live.ids["helen"]))
    helen.tap(start)  # closes
    helen.tap(start)  # opens: the list is fetched now
    expect(chips).to_have_text(["Grady", "Ines"])

    # Grady on a break (from his panel): his phone says so, he is not offered, the
    # roster says so.
    roster = narrator.page.get_by_role("region", name="Roster")
    narrator.tap(roster.get_by_role("link", name="Grady"))
    narrator.tap(narrator.control("button", "Grady is on a break"))
    expect(grady.page.get_by_text("You are on a break: nobody can challenge you.")).to_be_visible(
        timeout=AT_ONCE
    )
    expect(roster.locator("li", has_text="Grady")).to_contain_text("on a break")
    helen.tap(start)
    helen.tap(start)
    expect(chips).to_have_text(["Ines"])
    narrator.tap(narrator.control("button", "Grady is back from the break"))
    expect(grady.page.get_by_text("You are on a break")).to_have_count(0, timeout=AT_ONCE)

    # Ines leaves: off the roster and Helen's list.
    narrator.tap(narrator.page.locator("[data-close-panel]"))  # Grady's panel
    narrator.tap(roster.get_by_role("link", name="Ines"))
    narrator.tap(narrator.control("button", "Ines has left"))
    expect(roster.locator("li", has_text="Ines")).to_have_count(0, timeout=AT_ONCE)
    for pick in picks:  # the lists are filled again; the narrator's pick stays Helen
        expect(pick.locator("option")).to_have_text(["Grady", "Helen"])
        expect(pick).to_have_value(str(live.ids["helen"]))
    helen.tap(start)
    helen.tap(start)
    expect(chips).to_have_text(["Grady"])
    narrator.page.screenshot(path=f"{SHOTS}/tablet-presence.png")
    assert_usable(narrator)
