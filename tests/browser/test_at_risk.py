"""Issue 9, section 5: on her phone, Traits already at risk in another open
challenge are marked on her sheet and not offered for a bid."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.test_evening import SHOTS, Screen, log_in

pytestmark = pytest.mark.browser


def test_copies_at_risk_are_marked_and_not_offered(live, phone):
    helen = Screen(phone())
    log_in(helen.page, live("/accounts/login/"), "helen")
    helen.connected()
    ferocious = helen.control("button", "Challenge with Ferocious (Physical)")
    ids = []
    for _ in range(2):  # both of her Ferocious
        expect(ferocious).to_be_visible()
        helen.tap(helen.control("radio", "Grady"))
        helen.tap(ferocious)
        expect(helen.page.locator("article.card:not(.stage-resolved)")).to_have_count(len(ids) + 1)
        ids = [
            int(card.get_attribute("id").removeprefix("card-"))
            for card in helen.page.locator("#open-cards article.card").all()
        ]
    line = helen.sheet().locator("li", has_text="Ferocious")
    expect(line).to_have_text(
        re.compile(rf"^Ferocious ×2\s+\(2 at risk in #{ids[0]}, #{ids[1]}\)$")
    )
    expect(ferocious).to_have_count(0)
    expect(helen.control("button", "Challenge with Quick (Physical)")).to_be_visible()
    helen.page.screenshot(path=f"{SHOTS}/phone-at-risk.png", full_page=True)
