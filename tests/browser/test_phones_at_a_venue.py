"""A phone at a venue, in a real browser (Daphne, Debian's chromium, 360 px):
a tap that starts a challenge says so and sends it once, the defender's
phone pins "Helen challenges you: answer" at the top, vibrates and keeps
its screen awake, and a tap on the bar brings the card; a lost link shows
across the screen after 2 s; a reload offline shows her sheet as last seen.

One server for the module (its evening grows from test to test); the
browser's vibration and wake lock are stubbed in an init script that
records each call."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PHONE, _Server
from tests.browser.test_evening import log_in

pytestmark = pytest.mark.browser

#: Records navigator.vibrate and navigator.wakeLock.request calls (headless
#: chromium has neither a motor nor a screen to keep awake).
STUBS = """
window.__vibrations = [];
window.__wakeLocks = { requested: 0, released: 0 };
Object.defineProperty(navigator, "vibrate", { configurable: true, value: function (pattern) {
  window.__vibrations.push(pattern); return true; } });
Object.defineProperty(navigator, "wakeLock", { configurable: true, value: { request: function () {
  window.__wakeLocks.requested += 1;
  return Promise.resolve({ release: function () { window.__wakeLocks.released += 1;
    return Promise.resolve(); }, addEventListener: function () {} }); } } });
"""


@pytest.fixture(scope="module")
def venue(migrated_db, tmp_path_factory):
    server = _Server(migrated_db, tmp_path_factory.mktemp("venue"))
    try:
        yield server.ready()
    finally:
        server.stop()


@pytest.fixture
def phone_page(browser):
    """``phone_page()``: a new 360 px phone with the stubs, its own context."""
    contexts = []

    def make() -> Page:
        context = browser.new_context(**PHONE)
        context.set_default_timeout(10_000)
        context.add_init_script(STUBS)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


def in_view(page: Page, selector: str) -> bool:
    """The element is on screen (top and bottom edge inside the viewport's height)."""
    return page.eval_on_selector(
        selector,
        "e => { const r = e.getBoundingClientRect();"
        " return r.top >= 0 && r.top < innerHeight && r.bottom > 0; }",
    )


def test_a_challenge_is_sent_once_said_sent_and_pinned_on_the_defenders_phone(venue, phone_page):
    helen = phone_page()
    log_in(helen, venue("/accounts/login/"), "helen")
    grady = phone_page()
    grady.goto(venue(venue.ids["grady_join"]))
    for page in (helen, grady):
        expect(page.locator("#connection")).to_have_text("Connected")
    sent: list[str] = []
    helen.on(
        "websocket",
        lambda socket: socket.on("framesent", lambda frame: sent.append(str(frame))),
    )
    helen.reload()  # the socket opened before the listener: a new one
    expect(helen.locator("#connection")).to_have_text("Connected")

    start = helen.locator("form.start-form")
    start.get_by_label("Grady").check()
    # A double tap: both clicks land before any frame can come back.
    start.get_by_role("button", name="Challenge with Ferocious (Physical)").evaluate(
        "b => { b.click(); b.click(); }"
    )
    expect(helen.locator(".start-sent")).to_have_text("Challenge sent to Grady")
    card = helen.locator("#open-cards article.card")
    expect(card).to_have_count(1)
    expect(card).to_have_class("card stage-response just-now")
    assert in_view(helen, "#open-cards article.card")
    assert sum('"challenge.open"' in frame for frame in sent) == 1

    bar = grady.locator("#waiting-bar")
    expect(bar).to_have_text("Helen challenges you: answer")
    grady.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
    assert in_view(grady, "#waiting-bar")  # pinned: still at the top
    card_id = grady.locator("#open-cards article.card").get_attribute("id")
    assert not in_view(grady, f"#{card_id}")
    bar.get_by_role("link").tap()
    grady.wait_for_function(
        "id => { const r = document.getElementById(id).getBoundingClientRect();"
        " return r.top >= 0 && r.top < innerHeight; }",
        arg=card_id,
    )
    assert grady.evaluate("() => window.__vibrations.length") == 1
    assert grady.evaluate("() => window.__wakeLocks.requested") == 1
    assert helen.evaluate("() => window.__vibrations.length") == 0  # nothing waits on her

    # His answer is made: nothing waits on him, the screen may sleep again.
    grady.locator(f"#{card_id} details.relent > summary").tap()
    grady.locator(f"#{card_id}").get_by_role("button", name="Yes, relent").tap()
    expect(bar).to_be_hidden()
    grady.wait_for_function("() => window.__wakeLocks.released === 1")


def test_a_lost_link_shows_across_the_screen_and_a_reload_offline_shows_her_sheet(
    venue, phone_page
):
    helen = phone_page()
    log_in(helen, venue("/accounts/login/"), "helen")
    expect(helen.locator("#connection")).to_have_text("Connected")
    helen.wait_for_function(
        "() => navigator.serviceWorker.getRegistration().then(r => !!(r && r.active))"
    )
    # Her page as last seen, kept for a reload offline (after the view's frame).
    helen.wait_for_function(
        "() => caches.open('narrator-pages').then(c => c.match(location.pathname)).then(r => !!r)"
    )
    helen.wait_for_function(
        "() => caches.open('narrator-shell').then(c => c.keys()).then(k => k.length >= 4)"
    )
    context = helen.context
    context.set_offline(True)
    lost_at = time.monotonic()
    banner = helen.locator("#link-lost")
    expect(banner).to_be_visible()
    assert time.monotonic() - lost_at >= 1.8  # not for a blink: after 2 s
    expect(banner).to_have_text("Offline: your moves will be sent when the connection returns.")
    box = banner.bounding_box()
    assert box["x"] == 0 and box["width"] == PHONE["viewport"]["width"]

    helen.reload()
    expect(helen.get_by_role("region", name="Character sheet")).to_be_visible()
    expect(helen.get_by_role("heading", name="Helen", exact=True)).to_be_visible()
    expect(banner).to_have_text("Offline: your moves will be sent when the connection returns.")

    context.set_offline(False)
    expect(helen.locator("#connection")).to_have_text("Connected", timeout=20_000)
    expect(banner).to_be_hidden()
