"""Issue 11, statics: a prepared static played from a 360 px phone through the
real app (Daphne, websockets, Debian's chromium) with no narrator at the
table. The narrator prints the QR sheet; Grady (signed in by his join link)
opens the card's link, taps "Try it", bids, throws, sees "Success!" and what
winning reveals; the dashboard shows the attempt; his phone never shows the
difficulty."""

from __future__ import annotations

import sqlite3

import pytest
from playwright.sync_api import expect

from tests.browser.test_evening import AT_ONCE, Screen, assert_usable, log_in

pytestmark = pytest.mark.browser

TOKEN = "browser-test-vault-door-token"


def _prepare_the_vault_door(live) -> None:
    """A prepared static in the live evening's chronicle: Physical, difficulty 3."""
    chronicle = _chronicle(live)
    with sqlite3.connect(live.db) as db:
        db.execute(
            "INSERT INTO challenges_preparedstatic (chronicle_id, name, hint, category,"
            " difficulty, reveal, may_overbid, may_retest, token, active, created_at)"
            " VALUES (?, 'the vault door', 'Locked. Force it open.', 'physical', 3,"
            " 'Inside: the Prince''s letters.', 0, 0, ?, 1, datetime('now'))",
            (chronicle, TOKEN),
        )


def _the_server_throws_scissors(live) -> None:
    """Fix the server's drawn throw of the open attempt (as the rules tests fix
    ``choose``), so the browser's result is known: Grady's rock wins."""
    with sqlite3.connect(live.db) as db:
        (pk,) = db.execute(
            "SELECT c.id FROM challenges_challenge c JOIN challenges_preparedstatic p"
            " ON c.prepared_id = p.id WHERE p.token = ?",
            (TOKEN,),
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
    _prepare_the_vault_door(live)
    narrator = Screen(tablet())
    log_in(narrator.page, live("/accounts/login/?next=/narrate/"), "narrator")
    narrator.connected()
    sheet = narrator.page.context.new_page()
    sheet.goto(live(f"/narrate/chronicle/{_chronicle(live)}/statics/print/"))
    card = sheet.get_by_role("region", name="the vault door")
    expect(card).to_contain_text("Locked. Force it open.")
    expect(card.locator("svg")).to_be_visible()
    link = card.get_by_role("link").get_attribute("href")
    assert link == live(f"/s/{TOKEN}/")

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


def _chronicle(live) -> int:
    with sqlite3.connect(live.db) as db:
        (chronicle,) = db.execute(
            "SELECT chronicle_id FROM characters_gamesession WHERE id = ?", (live.ids["session"],)
        ).fetchone()
    return chronicle
