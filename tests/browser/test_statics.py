"""Issue 11, statics: a prepared static played from a 360 px phone through the
real app (Daphne, websockets, Debian's chromium) with no narrator at the
table. The narrator prepares it on the dashboard's page (tablet) and prints
the QR sheet; Grady (signed in by his join link)
opens the card's link, taps "Try it", bids, throws, sees "Success!" and what
winning reveals; the dashboard shows the attempt; his phone never shows the
difficulty."""

from __future__ import annotations

import sqlite3

import pytest
from playwright.sync_api import expect

from tests.browser.test_evening import AT_ONCE, Screen, assert_usable, log_in

pytestmark = pytest.mark.browser


def _the_server_throws_scissors(live) -> None:
    """Fix the server's drawn throw of the open attempt (as the rules tests fix
    ``choose``), so the browser's result is known: Grady's rock wins."""
    with sqlite3.connect(live.db) as db:
        (pk,) = db.execute(
            "SELECT c.id FROM challenges_challenge c JOIN challenges_preparedstatic p"
            " ON c.prepared_id = p.id WHERE p.name = 'the vault door'",
        ).fetchone()
        db.execute(
            "UPDATE challenges_challenge SET state = json_set(state,"
            " '$.tests[0].defender_throw', 'scissors') WHERE id = ?",
            (pk,),
        )
        db.execute(
            "UPDATE challenges_test SET defender_throw = 'scissors' WHERE challenge_id = ?",
            (pk,),
        )


def test_a_phone_plays_a_qr_static_with_no_narrator(live, phone, tablet):
    narrator = Screen(tablet())
    log_in(narrator.page, live("/accounts/login/?next=/narrate/"), "narrator")
    narrator.connected()
    narrator.tap(narrator.control("link", "Prepare, edit, retire"))
    form = narrator.page.locator("form.narrator-form")
    form.get_by_label("Object or place").fill("the vault door")
    form.get_by_label("Hint").fill("Locked. Force it open.")
    form.get_by_label("Category").select_option(label="Physical")
    form.get_by_label("Difficulty").fill("3")
    form.get_by_label("What winning reveals").fill("Inside: the Prince's letters.")
    narrator.tap(form.get_by_role("button", name="Add it"))
    expect(narrator.page.locator("table.statics")).to_contain_text("the vault door")
    with narrator.page.context.expect_page() as opened:
        narrator.tap(narrator.control("link", "Print QR cards"))
    sheet = opened.value
    card = sheet.get_by_role("region", name="the vault door")
    expect(card).to_contain_text("Locked. Force it open.")
    expect(card.locator("svg")).to_be_visible()
    link = card.get_by_role("link").get_attribute("href")
    assert link.startswith(live("/s/")) and len(link) > len(live("/s/")) + 20
    narrator.page.goto(live(f"/narrate/{live.ids['session']}/"))
    narrator.connected()

    grady = Screen(phone())
    grady.page.goto(live(live.ids["grady_join"]))
    grady.connected()
    grady.page.goto(link)  # the phone's camera opens the QR code's link
    expect(grady.page.get_by_role("heading", name="the vault door")).to_be_visible()
    assert_usable(grady)
    grady.tap(grady.page.get_by_role("button", name="Try it as Grady"))
    grady.connected()
    card = grady.open_card()
    expect(card).to_contain_text("Static Physical challenge", timeout=AT_ONCE)
    expect(card).to_contain_text("the vault door")
    _the_server_throws_scissors(live)
    grady.tap(grady.control("button", "Bid Tough"))
    grady.tap(grady.control("button", "Rock"))
    result = grady.page.locator("article.card").first
    expect(result.locator(".outcome")).to_have_text("Success!", timeout=AT_ONCE)
    expect(result.locator(".reveal")).to_have_text("Inside: the Prince's letters.")
    assert_usable(grady)
    assert "difficulty" not in grady.page.content().lower()

    row = (
        narrator.page.locator("#challenge-list")
        .locator("li, article, tr")
        .filter(has_text="the vault door")
    )
    expect(row.first).to_contain_text("Grady", timeout=AT_ONCE)
    expect(row.first).to_contain_text("Success!")
