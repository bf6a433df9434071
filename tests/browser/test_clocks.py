"""Issue 11, health clocks, through the UI of the real app (Daphne,
websockets, Debian's chromium): Grady is Mortally Wounded, his 360 px phone
counts down to his next lost Physical Trait, the clock runs out and the
narrator's tablet raises an alert (a banner, a beep), and her "Medical aid
given" stops the clock on his phone. seeds/000 "Health"."""

from __future__ import annotations

import re
import sqlite3
import time

import pytest
from playwright.sync_api import expect

from tests.browser.test_evening import AT_ONCE, SHOTS, Screen, assert_usable, log_in

pytestmark = pytest.mark.browser

RUNS_OUT = 25_000  # ms: the countdown's seconds plus a heartbeat (10 s) and some


def _mortally_wounded(live, pk: int, seconds_left: float) -> None:
    """Grady Mortally Wounded, his next Physical Trait lost in ``seconds_left``."""
    now = time.time()
    with sqlite3.connect(live.db) as db:
        changed = db.execute(
            "UPDATE characters_presence SET health = 4, clock_start = ?, clock_due = ? "
            "WHERE character_id = ?",
            (now + seconds_left - 600, now + seconds_left, pk),
        ).rowcount
    assert changed == 1


def test_a_countdown_on_the_phone_an_alert_on_the_tablet_and_medical_aid(live, phone, tablet):
    _mortally_wounded(live, live.ids["grady"], 8)
    grady, narrator = Screen(phone()), Screen(tablet())
    grady.page.goto(live(live.ids["grady_join"]))
    log_in(narrator.page, live("/accounts/login/?next=/narrate/"), "narrator")
    grady.connected()
    narrator.connected()

    clock = grady.page.locator("#clock")
    expect(clock).to_contain_text("Mortally Wounded: next Physical Trait lost in")
    expect(clock.locator("time")).to_have_text(re.compile(r"^0:0[0-7]$|^now$"))
    assert_usable(grady)
    roster_row = narrator.page.locator(f"#roster-{live.ids['grady']}")
    expect(roster_row.locator(".clock-tag")).to_be_visible()

    alert = narrator.page.locator("#clock-alerts .clock-alert")
    expect(alert).to_contain_text("lost a Physical Trait", timeout=RUNS_OUT)
    expect(alert).to_contain_text("Grady")
    expect(narrator.page.locator("#clock-alerts")).to_have_attribute("data-rang", "1")
    expect(clock.locator("time")).to_have_text(re.compile(r"^9:[0-5]\d$"), timeout=AT_ONCE)
    grady.page.screenshot(path=f"{SHOTS}/clock-phone.png")
    narrator.page.screenshot(path=f"{SHOTS}/clock-alert-tablet.png")

    narrator.tap(roster_row.locator("a.who"))
    aid = narrator.page.get_by_role("button", name="Medical aid given")
    narrator.page.screenshot(path=f"{SHOTS}/clock-panel-tablet.png")
    narrator.tap(aid)
    expect(clock).to_have_text("Medical aid given: you lose no more Traits.", timeout=AT_ONCE)
    narrator.tap(alert.get_by_role("button", name="OK"))
    expect(alert).to_have_count(0)
