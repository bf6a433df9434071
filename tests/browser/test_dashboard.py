"""Issue 9 §4: the narrator's dashboard on a 1024×768 tablet with 100 present
characters and 300 challenges: usable (nothing wider than the screen, every
control named), the roster's search finds a character, her panel opens with
her sheet tonight, "Open only" hides the results (and is remembered), Void asks
for a reason and a confirmation; a simple test started from a character's
panel reaches her phone (the panel follows, and the result folds a few
minutes on), where Relent asks once."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from challenges import views
from tests.browser import test_evening
from tests.browser.conftest import ROOT, _env
from tests.browser.test_evening import AT_ONCE, SHOTS, Screen, assert_usable, log_in

pytestmark = pytest.mark.browser

evening = test_evening.evening  # Helen, Grady and a narrator connected


def crowd(live) -> int:
    """Fill the live database (tests.browser.crowd); the odd guest's id."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.browser.crowd"],
        cwd=ROOT,
        env=_env(live.db, live.db.parent),
        check=True,
        timeout=120,
        capture_output=True,
        text=True,
    )
    return int(done.stdout.split()[-1])


def _unlisted_open_challenge(live, page) -> tuple[int, str]:
    """An open challenge the dashboard does not list (beyond its window) and
    the name of its defender, a guest, read from the live database."""
    import sqlite3

    listed = set(page.eval_on_selector_all("#challenge-list article", "a => a.map(e => e.id)"))
    with sqlite3.connect(live.db) as db:
        rows = db.execute(
            "SELECT c.id, d.name FROM challenges_challenge c"
            " JOIN characters_character d ON d.id = c.defender_id"
            " WHERE c.stage <> 'resolved' AND d.name LIKE 'Guest %' ORDER BY c.id DESC"
        ).fetchall()
    return next((pk, name) for pk, name in rows if f"challenge-{pk}" not in listed)


def test_a_crowded_dashboard_stays_usable_on_a_tablet(live, tablet):
    odd = crowd(live)
    narrator = Screen(tablet())
    page = narrator.page
    log_in(page, live("/accounts/login/?next=/narrate/"), "narrator")
    narrator.connected()
    roster = page.get_by_role("region", name="Roster")
    rows = page.locator("#challenge-list article")
    window = views.DASHBOARD_LIMIT  # 101 open, 500 results: a window of each
    expect(rows).to_have_count(window.open + window.results)
    expect(roster.locator("li")).to_have_count(150)  # Helen, Grady, 147 guests, the odd one
    # Open ones first: the first row waits; its clock runs.
    first = page.locator("#open-challenges article").first
    expect(first).to_contain_text("Waiting on")
    # "Needs a narrator": the challenges waiting longest, the odd one (two hours) first.
    needs = page.get_by_role("region", name="Needs a narrator")
    expect(needs.get_by_role("button").first).to_contain_text("Waiting on Helen")
    expect(needs.get_by_role("button").first).to_contain_text("120:")
    expect(needs.get_by_text("Nothing is waiting.")).to_be_hidden()
    assert_usable(narrator)
    page.screenshot(path=f"{SHOTS}/dashboard-crowd.png")

    # "Open only" hides the results, and the tablet remembers it.
    results = page.locator("#recent-results")
    expect(results).to_be_visible()
    narrator.tap(page.get_by_label("Open only"))
    expect(results).to_be_hidden()
    page.reload()
    narrator.connected()
    expect(page.get_by_label("Open only")).to_be_checked()
    expect(results).to_be_hidden()
    expect(page.locator("#open-challenges article").first).to_be_visible()
    narrator.tap(page.get_by_label("Open only"))
    expect(results).to_be_visible()

    # A named character's open challenge, not among those listed: her name
    # typed, one tap on it, one on the challenge's Rule… in her panel.
    pk, name = _unlisted_open_challenge(live, page)
    search = page.get_by_role("searchbox", name="Find a character by name")
    search.fill(name.lower())
    narrator.tap(roster.get_by_role("link", name=name, exact=True))
    panel = page.get_by_role("region", name=f"Character {name}")
    narrator.tap(panel.get_by_role("button", name=f"Rule on challenge {pk}"))
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text(f"Rule on #{pk}")
    narrator.tap(dialog.get_by_role("button", name="Close").first)
    expect(dialog).to_be_hidden()
    narrator.tap(panel.get_by_role("link", name="Close"))

    # "Find a challenge": by her name, then open ones only, counted; Rule… at hand.
    finder = page.get_by_role("region", name="Find a challenge")
    finder.get_by_role("searchbox").fill(name)
    found = finder.locator("li[data-found]")
    expect(found.first).to_contain_text(name)
    narrator.tap(finder.get_by_role("button", name=re.compile(r"^Open \d+$")))
    expect(finder.get_by_role("button", name=re.compile(r"^Open \d+$"))).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(finder.locator(f"li[data-found='{pk}']")).to_be_visible()
    narrator.tap(finder.get_by_role("button", name=f"Rule on challenge {pk}"))
    expect(dialog).to_contain_text(f"Rule on #{pk}")
    narrator.tap(dialog.get_by_role("button", name="Close").first)
    expect(dialog).to_be_hidden()

    # The search box finds a character; a tap opens her sheet tonight.
    search = page.get_by_role("searchbox", name="Find a character by name")
    search.fill("guest 042")
    expect(roster.locator("li:visible")).to_have_count(1)
    narrator.tap(roster.get_by_role("link", name="Guest 042"))
    panel = page.get_by_role("region", name="Character Guest 042")
    expect(panel).to_be_visible()
    assert page.url == live(f"/narrate/{live.ids['session']}/")  # htmx: no page change
    expect(panel).to_contain_text("Traits tonight")
    expect(panel).to_contain_text("Physical 7")
    expect(panel.get_by_role("button", name="Static challenge")).to_be_in_viewport()
    page.screenshot(path=f"{SHOTS}/dashboard-panel.png")
    assert_usable(narrator)
    narrator.tap(panel.get_by_role("link", name="Close"))
    expect(panel).to_have_count(0)
    search.fill("nobody like that")
    expect(roster.locator("li:visible")).to_have_count(0)
    expect(page.get_by_text("Nobody present by that name.")).to_be_visible()
    search.fill("")
    expect(roster.locator("li:visible")).to_have_count(150)

    # Void: a reason, then a confirmation; the reason shows on the result.
    odd_row = page.locator(f"#open-challenges article[data-characters*=' {odd} ']")
    expect(odd_row.locator("time.since")).not_to_have_text("0:00")  # waiting a while
    expect(odd_row).to_have_count(1)
    pk = odd_row.get_attribute("id").removeprefix("challenge-")
    narrator.tap(page.get_by_role("button", name=f"Void challenge {pk}", exact=True))
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    narrator.tap(dialog.get_by_role("button", name="Yes, void it"))
    expect(dialog).to_be_visible()  # no reason: the browser asks for one, nothing is sent
    expect(page.locator(f"#challenge-{pk}")).not_to_contain_text("Voided")
    dialog.get_by_label("Reason").fill("Ruled at the bar")
    narrator.tap(dialog.get_by_role("button", name="Yes, void it"))
    expect(dialog).to_be_hidden()
    voided = page.locator(f"#recent-results > #challenge-{pk}")
    expect(voided).to_contain_text("Voided by a narrator", timeout=AT_ONCE)
    expect(voided).to_contain_text("Reason: Ruled at the bar")
    expect(page.locator("#recent-results article").first).to_have_id(f"challenge-{pk}")
    assert_usable(narrator)


def test_a_simple_test_started_from_her_panel_reaches_her_phone_where_relent_asks_once(evening):
    helen, grady, narrator = evening
    page = narrator.page
    page.clock.install()  # the dashboard's own clock, to fold a result a few minutes on
    page.reload()
    narrator.connected()
    narrator.tap(page.get_by_role("region", name="Roster").get_by_role("link", name="Helen"))
    panel = page.get_by_role("region", name="Character Helen")
    simple = panel.get_by_role("form", name="Simple test for Helen")
    simple.get_by_label("What it is").fill("Spot the forgery")
    narrator.tap(simple.get_by_role("button", name="Simple test"))
    expect(helen.open_card()).to_contain_text("Spot the forgery", timeout=AT_ONCE)
    expect(panel).to_contain_text("Simple test: Helen vs the narrator", timeout=AT_ONCE)
    helen.tap(helen.control("button", "Rock"))
    result = page.locator("#recent-results article").first
    expect(result).to_contain_text("Simple test")
    expect(result.locator("details")).to_have_js_property("open", True)
    expect(result.get_by_role("status")).to_have_text(re.compile(r"^(Success!|Failure\.)$"))

    # Four minutes on, the result folds to its outcome line.
    page.clock.fast_forward("04:00")
    expect(result.locator("details")).to_have_js_property("open", False)
    expect(result.get_by_role("status")).to_be_visible()
    expect(result.locator(".row-head")).to_be_hidden()

    # Grady is challenged; "Relent…" asks before anything is sent.
    helen.tap(helen.control("radio", "Grady"))
    helen.tap(helen.control("button", "Challenge with Ferocious (Physical)"))
    card = grady.open_card()
    grady.tap(card.get_by_text("Relent…", exact=True))
    expect(card).to_contain_text("Relent: you lose this challenge; nothing of yours is lost.")
    expect(card.get_by_role("button", name="Bid Resilient")).to_be_visible()  # nothing sent yet
    grady.page.screenshot(path=f"{SHOTS}/phone-relent.png", full_page=True)
    grady.tap(card.get_by_role("button", name="Yes, relent"))
    expect(grady.page.locator("article.card").first.get_by_role("status")).to_have_text(
        "You lose. (relented)", timeout=AT_ONCE
    )
