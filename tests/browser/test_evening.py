"""Issue 2: two phone-sized players and a narrator play through the UI of the
real app (Daphne, websockets, Debian's chromium): a challenge, a tie, a Time
out and Resume, a static challenge and a simple test.

Every control is found by its accessible name in the game's words; taps are
counted where the brief sets a budget (seeds/000 "The Challenge": bid, throw).
"""

from __future__ import annotations

import re
import sqlite3

import pytest
from playwright.sync_api import Locator, Page, WebSocket, expect

pytestmark = pytest.mark.browser

AT_ONCE = 3_000  # ms: "at once" on another screen, through the websocket
SHOTS = "/tmp/narrator-browser"  # screenshots to look at


class Screen:
    """One person's page, counting the taps she makes."""

    def __init__(self, page: Page):
        self.page = page
        self.taps = 0
        self.socket: WebSocket | None = None
        page.on("websocket", self._opened)

    def _opened(self, socket: WebSocket) -> None:
        self.socket = socket

    def next_view(self):
        """Wait (as a context manager) for the next view the server pushes to this page."""
        return self.socket.expect_event(
            "framereceived", predicate=lambda frame: str(frame).startswith("<")
        )

    def tap(self, locator: Locator) -> None:
        locator.tap()
        self.taps += 1

    def control(self, role: str, name: str) -> Locator:
        return self.page.get_by_role(role, name=name, exact=True)

    def open_card(self) -> Locator:
        """The one challenge card still in play on this phone."""
        return self.page.locator("article.card:not(.stage-resolved)")

    def card(self, pk: int) -> Locator:
        return self.page.locator(f"#card-{pk}")

    def sheet(self) -> Locator:
        return self.page.get_by_role("region", name="Character sheet")

    def connected(self) -> None:
        expect(self.page.locator("#connection")).to_have_text("Connected")


def log_in(page: Page, url: str, username: str) -> None:
    page.goto(url)
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("pw-" + username)
    page.get_by_role("button", name="Log in").click()


def outside_forms(element: Locator) -> str:
    """An element's markup without its forms (the viewer's own throw buttons), lower case."""
    return element.evaluate(
        "c => { const x = c.cloneNode(true); x.querySelectorAll('form').forEach(f => f.remove());"
        " return x.outerHTML; }"
    ).lower()


CONTROL_ROLES = "button|checkbox|radio|textbox|spinbutton|combobox|link|slider|switch"
UNNAMED = re.compile(rf"^\s*- ({CONTROL_ROLES})(\s*:.*|\s*\[[^\]]*\].*)?$", re.MULTILINE)


def assert_usable(screen: Screen) -> None:
    """Every control has an accessible name, and nothing is wider than the screen."""
    snapshot = screen.page.locator("body").aria_snapshot()
    assert UNNAMED.findall(snapshot) == [], f"controls without a name:\n{snapshot}"
    overflow = screen.page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, f"the page is {overflow}px wider than the screen"


def fill_in(form: Locator, fields: dict[str, str]) -> None:
    """Choose or type each value in the field labelled by its key."""
    for label, value in fields.items():
        field = form.get_by_label(label)
        if field.evaluate("e => e.tagName") == "SELECT":
            field.select_option(label=value)
        else:
            field.fill(value)


def category_count(screen: Screen, category: str) -> Locator:
    return screen.sheet().locator("h3", has_text=category).locator(".count")


@pytest.fixture
def evening(live, phone, tablet):
    """Helen logs in with her password, Grady with his one-tap join link, the
    narrator opens /narrate/ on a tablet; all three are connected."""
    helen = Screen(phone())
    log_in(helen.page, live("/accounts/login/"), "helen")
    grady = Screen(phone())
    grady.page.goto(live(live.ids["grady_join"]))
    narrator = Screen(tablet())
    log_in(narrator.page, live("/accounts/login/?next=/narrate/"), "narrator")
    for screen in (helen, grady, narrator):
        screen.connected()
    expect(helen.page.get_by_role("heading", name="Helen", exact=True)).to_be_visible()
    expect(grady.page.get_by_role("heading", name="Grady", exact=True)).to_be_visible()
    return helen, grady, narrator


def test_two_phones_and_a_narrator_play_a_challenge_a_tie_and_a_time_out(live, evening):
    helen, grady, narrator = evening
    dashboard = narrator.page

    # Both phones show the sheet: Traits by category with counts, Negative Traits,
    # Abilities, health.
    expect(category_count(helen, "Physical")).to_have_text("7")
    expect(category_count(helen, "Social")).to_have_text("1")
    expect(category_count(helen, "Mental")).to_have_text("1")
    expect(helen.sheet()).to_contain_text("Ferocious ×2")
    expect(helen.sheet().get_by_role("heading", name="Negative Traits")).to_be_visible()
    expect(helen.sheet()).to_contain_text("Clumsy")
    expect(helen.sheet().get_by_role("heading", name="Abilities")).to_be_visible()
    expect(helen.sheet()).to_contain_text("Brawl 2")
    expect(helen.page.locator("section.who")).to_contain_text("Health: Healthy")
    expect(category_count(grady, "Physical")).to_have_text("5")
    expect(grady.sheet()).to_contain_text("Resilient ×2")
    expect(grady.page.locator("section.who")).to_contain_text("Health: Healthy")
    helen.page.screenshot(path=f"{SHOTS}/phone-sheet.png", full_page=True)
    for screen in (helen, grady, narrator):
        assert_usable(screen)

    # Helen challenges Grady: Physical, bid Ferocious, an attack.
    helen.taps = grady.taps = 0
    helen.tap(helen.control("radio", "Grady"))
    helen.tap(helen.control("checkbox", "Attack: a loss costs a health level"))
    helen.tap(helen.control("button", "Challenge with Ferocious (Physical)"))
    card = helen.open_card()
    expect(card).to_contain_text("Waiting on Grady for a bid or relent")
    pk = int(card.get_attribute("id").removeprefix("card-"))
    row = dashboard.locator(f"#challenge-{pk}")

    # Grady's phone shows it at once; he bids Resilient.
    expect(grady.open_card()).to_contain_text("from Helen", timeout=AT_ONCE)
    expect(grady.open_card()).to_contain_text("attack")
    expect(row).to_contain_text("Waiting on Grady for a bid or relent", timeout=AT_ONCE)
    grady.page.screenshot(path=f"{SHOTS}/phone-challenged.png", full_page=True)
    assert_usable(grady)
    # Relent is apart from the bids and asks once: "Relent…" only opens the question.
    expect(grady.page.get_by_text("Relent…", exact=True)).to_be_visible()
    expect(grady.control("button", "Yes, relent")).to_be_hidden()
    grady.tap(grady.control("button", "Bid Resilient"))
    expect(helen.card(pk)).to_contain_text("Grady bids Resilient")

    # Grady throws first: nobody else may see it before Helen's throw is in,
    # though her phone gets the new view at once.
    with helen.next_view():
        grady.tap(grady.control("button", "Scissors"))
    expect(grady.card(pk)).to_contain_text("you threw Scissors")
    expect(row).to_contain_text("Helen has not thrown, Grady has thrown")
    expect(helen.control("button", "Rock")).to_be_visible()
    assert "scissors" not in outside_forms(helen.page.locator("body"))
    assert "grady threw" not in helen.card(pk).inner_text().lower()
    assert "scissors" not in outside_forms(dashboard.locator("#challenge-list"))
    helen.page.screenshot(path=f"{SHOTS}/phone-throw.png", full_page=True)
    assert_usable(helen)
    assert_usable(narrator)
    helen.tap(helen.control("button", "Rock"))

    # Both phones show the outcome; Grady loses one Resilient and a health level.
    expect(helen.card(pk).get_by_role("status")).to_have_text(
        "You win! Grady loses Resilient and a health level."
    )
    expect(grady.card(pk).get_by_role("status")).to_have_text(
        "You lose: your Resilient is lost and you lose a health level."
    )
    expect(grady.card(pk)).to_contain_text("Helen threw Rock")
    assert helen.taps <= 5, f"the challenger needed {helen.taps} taps"
    assert grady.taps <= 3, f"the defender needed {grady.taps} taps"
    struck = grady.sheet().locator("s.lost")
    expect(struck).to_have_count(1)
    expect(struck).to_have_text("Resilient")
    held_and_struck = grady.sheet().locator("li").filter(has=grady.page.locator("s.lost"))
    expect(held_and_struck).to_have_text(re.compile(r"^Resilient\s+Resilient$"))
    expect(category_count(grady, "Physical")).to_have_text("4")
    expect(grady.page.locator("section.who")).to_contain_text("Health: Bruised")
    expect(row.get_by_role("status")).to_have_text(
        "Helen wins. Grady loses Resilient and a health level."
    )
    expect(row).to_contain_text("Rock vs Scissors")
    grady_row = dashboard.get_by_role("region", name="Roster").locator("li", has_text="Grady")
    expect(grady_row).to_contain_text("Bruised")
    expect(grady_row).to_contain_text("P 4 −1")
    grady.page.screenshot(path=f"{SHOTS}/phone-lost.png", full_page=True)
    # He has no Mental Trait, so the challenge form offers no empty Mental row.
    bid_group = grady.page.get_by_role("group", name="Bid a Trait to challenge")
    expect(bid_group).to_contain_text("Physical")
    expect(bid_group).not_to_contain_text("Mental")

    # A tie: both throw Rock; Helen declares first, then Grady (default = his count).
    helen.tap(helen.control("radio", "Grady"))
    helen.tap(helen.control("button", "Challenge with Quick (Physical)"))
    # Bruised, Grady bids two Traits (seeds/000 "Health"): two copies of Tough.
    expect(grady.open_card()).to_contain_text("Bruised: bid two Physical Traits")
    grady.tap(grady.open_card().get_by_role("checkbox", name="Tough ×3"))
    grady.tap(grady.open_card().get_by_role("checkbox", name="Tough again"))
    grady.tap(grady.control("button", "Bid these two Traits"))
    grady.tap(grady.control("button", "Rock"))
    helen.tap(helen.control("button", "Rock"))
    expect(helen.open_card()).to_contain_text("a tie")
    expect(helen.control("spinbutton", "Trait count")).to_have_value("7")
    expect(grady.open_card()).to_contain_text("Waiting on Helen for a Trait count")
    helen.page.screenshot(path=f"{SHOTS}/phone-declare.png", full_page=True)
    assert_usable(helen)
    helen.tap(helen.control("button", "Declare"))
    expect(grady.open_card()).to_contain_text("Helen declared 7 Traits")
    expect(grady.control("spinbutton", "Trait count")).to_have_value("4")
    grady.tap(grady.control("button", "Declare"))
    tie_row = dashboard.locator(f"#challenge-{pk + 1}")
    expect(tie_row.get_by_role("status")).to_have_text("Helen wins. Grady loses Tough ×2.")
    expect(tie_row).to_contain_text("Rock vs Rock (tie: 7 vs 4)")
    expect(helen.card(pk + 1).get_by_role("status")).to_have_text("You win! Grady loses Tough ×2.")
    expect(grady.card(pk + 1)).to_contain_text("Traits declared: Helen 7, Grady 4")

    # Grady challenges Helen, both bid; then the narrator calls Time out.
    grady.tap(grady.control("radio", "Helen"))
    start = grady.page.get_by_role("group", name="Bid a Trait to challenge")
    grady.tap(start.get_by_role("checkbox", name="Tough").first)
    grady.tap(start.get_by_role("checkbox", name="Resilient"))
    grady.tap(start.get_by_role("button", name="Challenge with two Physical Traits"))
    helen.tap(helen.control("button", "Bid Brawny"))
    expect(grady.control("button", "Paper")).to_be_visible()
    narrator.tap(narrator.control("button", "Time out"))
    for phone in (helen, grady):
        banner = phone.page.locator("#time-out")
        expect(banner).to_have_text("Time out! A narrator has stopped play. Wait for Resume.")
        expect(banner).to_be_visible(timeout=AT_ONCE)
    expect(narrator.control("button", "Resume")).to_be_visible()
    helen.page.screenshot(path=f"{SHOTS}/phone-time-out.png", full_page=True)

    # A throw during the Time out is refused with a clear message; nothing changes.
    helen.tap(helen.control("button", "Rock"))
    expect(helen.page.get_by_role("alert")).to_have_text(
        "Time out! A narrator has stopped play; wait for Resume."
    )
    expect(helen.page.get_by_role("alert")).to_be_in_viewport()
    assert_usable(helen)
    assert_usable(narrator)
    helen.page.screenshot(path=f"{SHOTS}/phone-refused.png")
    expect(helen.control("button", "Rock")).to_be_enabled()
    assert "you threw" not in helen.open_card().inner_text()
    expect(dashboard.locator(f"#challenge-{pk + 2}")).to_contain_text(
        "Grady has not thrown, Helen has not thrown"
    )

    # Resume lifts it at once and play continues.
    narrator.tap(narrator.control("button", "Resume"))
    for phone in (helen, grady):
        expect(phone.page.locator("#time-out")).to_be_hidden(timeout=AT_ONCE)
    expect(helen.page.get_by_role("alert")).to_be_hidden(timeout=AT_ONCE)  # no stale refusal
    expect(narrator.control("button", "Time out")).to_be_visible()
    helen.tap(helen.control("button", "Rock"))
    grady.tap(grady.control("button", "Paper"))
    # Helen lost the test but holds more than double Grady's Traits: she may
    # overbid (seeds/000 "Overbidding"); she accepts instead.
    expect(helen.card(pk + 2)).to_contain_text("Overbid")
    helen.tap(helen.card(pk + 2).get_by_role("button", name="Accept: you lose"))
    expect(helen.card(pk + 2).get_by_role("status")).to_have_text("You lose: your Brawny is lost.")
    expect(dashboard.locator(f"#challenge-{pk + 2}").get_by_role("status")).to_have_text(
        "Grady wins. Helen loses Brawny."
    )
    helen_row = dashboard.get_by_role("region", name="Roster").locator("li", has_text="Helen")
    expect(helen_row).to_contain_text("P 6 −1")
    dashboard.screenshot(path=f"{SHOTS}/dashboard.png", full_page=True)
    assert_usable(narrator)

    # What the phones show is what the database holds.
    with sqlite3.connect(live.db) as db:
        lost = db.execute(
            "SELECT c.name, t.name FROM challenges_traitloss l"
            " JOIN characters_trait t ON t.id = l.trait_id"
            " JOIN characters_character c ON c.id = t.character_id ORDER BY l.id"
        ).fetchall()
    assert lost == [
        ("Grady", "Resilient"),
        ("Grady", "Tough"),
        ("Grady", "Tough"),
        ("Helen", "Brawny"),
    ]
    assert_consistent(live)


def assert_consistent(live) -> None:
    """The evening left a play history ``manage.py checkstate`` finds consistent."""
    done = live.checkstate()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "The play history is consistent." in done.stdout


def test_the_narrator_runs_a_static_challenge_and_a_simple_test_for_helen(live, evening):
    helen, grady, narrator = evening
    static = narrator.page.get_by_role("region", name="Static challenge")
    fill_in(
        static,
        {
            "Character": "Helen",
            "Category": "Physical",
            "Difficulty (Traits)": "4",
            "Narrator's throw": "Scissors",
            "What it is": "The locked door",
        },
    )
    narrator.tap(static.get_by_role("button", name="Start static challenge"))

    card = helen.open_card()
    expect(card).to_contain_text("Static Physical challenge", timeout=AT_ONCE)
    expect(card).to_contain_text("The locked door")
    expect(card).to_contain_text("Difficulty: 4 Traits")
    helen.tap(helen.control("button", "Bid Quick"))
    helen.tap(helen.control("button", "Rock"))
    expect(helen.page.get_by_role("status").filter(has_text="Success!")).to_have_text("Success!")
    expect(narrator.page.locator("#challenge-list").get_by_role("status").first).to_have_text(
        "Success!"
    )
    # The form stays ready for the next one.
    expect(static.get_by_role("button", name="Start static challenge")).to_be_enabled()

    simple = narrator.page.get_by_role("region", name="Simple test")
    fill_in(
        simple,
        {"Character": "Helen", "Narrator's throw": "Scissors", "What it is": "Notice the ambush"},
    )
    narrator.tap(simple.get_by_role("button", name="Start simple test"))
    card = helen.open_card()
    expect(card).to_contain_text("Simple test", timeout=AT_ONCE)
    expect(card).to_contain_text("Notice the ambush")
    helen.tap(helen.control("button", "Rock"))
    expect(helen.page.locator(".card").first.get_by_role("status")).to_have_text("Success!")
    expect(simple.get_by_role("button", name="Start simple test")).to_be_enabled()
    # Grady was never involved.
    expect(grady.page.locator("article.card")).to_have_count(0)
    assert_consistent(live)


def test_a_player_arriving_after_the_narrator_gets_a_simple_test_at_once(live, evening, phone):
    helen, grady, narrator = evening
    roster = narrator.page.get_by_role("region", name="Roster")
    expect(roster).not_to_contain_text("Ines")
    ines = Screen(phone())
    log_in(ines.page, live("/accounts/login/"), "ines")
    ines.connected()
    expect(roster.locator("li", has_text="Ines")).to_contain_text("P 1", timeout=AT_ONCE)
    simple = narrator.page.get_by_role("region", name="Simple test")
    fill_in(simple, {"Character": "Ines", "Narrator's throw": "Rock", "What it is": "Sneak in"})
    narrator.tap(simple.get_by_role("button", name="Start simple test"))
    expect(ines.open_card()).to_contain_text("Sneak in", timeout=AT_ONCE)
    ines.tap(ines.control("button", "Paper"))
    expect(ines.page.locator(".card").first.get_by_role("status")).to_have_text("Success!")
    static = narrator.page.get_by_role("region", name="Static challenge")
    expect(static.get_by_label("Character").locator("option")).to_have_text(
        ["Grady", "Helen", "Ines"]
    )
