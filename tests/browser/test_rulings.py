"""s11 rulings in the real app (Daphne, websockets, chromium): Grady's phone
calls a narrator; the tablet shows the challenge flagged on top (and counts
the beep), the narrator settles it for Helen with a reason, and both phones
show the ruling at once. seeds/000 "Adjudication"; RULES.md "Disputes"."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.test_evening import AT_ONCE, SHOTS, assert_usable
from tests.browser.test_retests import _challenge, screens  # noqa: F401 - the fixture

pytestmark = pytest.mark.browser


def test_a_call_for_a_narrator_answered_by_a_ruling(live, screens):  # noqa: F811
    helen, grady, narrator = screens
    pk = _challenge(helen, grady, "Quick")
    grady.tap(grady.control("button", "Bid Resilient"))
    grady_card, helen_card = grady.card(pk), helen.card(pk)
    expect(grady_card.get_by_role("button", name="Rock")).to_be_visible()

    # Grady calls a narrator, with a short reason.
    grady.tap(grady_card.get_by_text("Call a narrator…"))
    grady_card.get_by_role("textbox", name="Why (optional)").fill("She threw late")
    grady.tap(grady_card.get_by_role("button", name="Call a narrator"))
    expect(grady_card).to_contain_text("A narrator is called (you called)", timeout=AT_ONCE)
    expect(helen_card).to_contain_text("A narrator is called by Grady", timeout=AT_ONCE)

    # The tablet: the row on top, flagged, one beep.
    first = narrator.page.locator("#challenge-list article").first
    expect(first).to_have_attribute("id", f"challenge-{pk}", timeout=AT_ONCE)
    expect(first).to_contain_text("Narrator called by Grady: “She threw late”")
    expect(narrator.page.locator("body")).to_have_attribute("data-calls", "1")
    # "Needs a narrator" lists the call first, never beside "Nothing is waiting."
    needs = narrator.page.get_by_role("region", name="Needs a narrator")
    call = needs.get_by_role("button").first
    expect(call).to_contain_text("Narrator called by Grady", timeout=AT_ONCE)
    expect(call).to_contain_text(f"Challenge {pk}: Helen and Grady")
    expect(needs.get_by_text("Nothing is waiting.")).to_be_hidden()
    narrator.page.screenshot(path=f"{SHOTS}/tablet-called.png")

    # The narrator rules from the list (one tap): settled for Helen, with a reason.
    narrator.tap(call)
    dialog = narrator.page.get_by_role("dialog")
    expect(dialog).to_contain_text(f"Rule on #{pk} Helen vs Grady")
    settle = dialog.get_by_role("group", name="Settle it")
    settle.get_by_label("For Helen").check()
    reason = "Grady's bid came after the throw"
    settle.get_by_role("textbox", name="Reason").fill(reason)
    narrator.page.screenshot(path=f"{SHOTS}/tablet-rule.png")
    assert_usable(narrator)
    narrator.tap(settle.get_by_role("button", name="Settle it"))
    expect(dialog).to_be_hidden(timeout=AT_ONCE)

    line = "Narrator ruling: Settled for Helen — Grady's bid came after the throw"
    expect(helen_card).to_contain_text(line, timeout=AT_ONCE)
    expect(grady_card).to_contain_text(line, timeout=AT_ONCE)
    expect(grady_card.get_by_role("status").last).to_contain_text("Resilient")
    row = narrator.page.locator(f"#challenge-{pk}")
    expect(row).to_contain_text(line, timeout=AT_ONCE)
    expect(narrator.page.locator("#called-challenges article")).to_have_count(0)
    expect(needs.get_by_text("Nothing is waiting.")).to_be_visible()
    grady.page.screenshot(path=f"{SHOTS}/phone-ruling.png", full_page=True)
    assert_usable(grady)

    # The evening's history: the call and the ruling, filtered to rulings (htmx).
    narrator.tap(narrator.page.get_by_role("link", name="The evening's history"))
    table = narrator.page.locator("#history-table")
    expect(table).to_contain_text("Helen challenges Grady (Physical)")
    narrator.page.get_by_label("Kind").select_option("ruling")
    expect(table).not_to_contain_text("Helen challenges Grady", timeout=AT_ONCE)
    expect(table).to_contain_text("Grady calls a narrator — “She threw late”")
    expect(table).to_contain_text(f"Narrator ruling: settled for Helen — {reason}")
    assert "kind=ruling" in narrator.page.url
    narrator.page.screenshot(path=f"{SHOTS}/tablet-history.png", full_page=True)
    assert_usable(narrator)


def test_call_a_narrator_is_a_full_size_target_apart_from_the_throws(live, screens):  # noqa: F811
    """On a 360 px phone the "Call a narrator" target is at least 44×44 CSS
    px and sits at the card's foot, at least 24 px below the throws and
    never beside them: a hurried throw does not call a narrator."""
    helen, grady, _ = screens
    pk = _challenge(helen, grady, "Quick")
    grady.tap(grady.control("button", "Bid Resilient"))
    card = grady.card(pk)
    expect(card.get_by_role("button", name="Rock")).to_be_visible()
    call = card.locator("details.call-narrator > summary").bounding_box()
    assert call is not None and call["width"] >= 44 and call["height"] >= 44, call
    throws = [
        card.get_by_role("button", name=n).bounding_box() for n in ("Rock", "Paper", "Scissors")
    ]
    lowest = max(b["y"] + b["height"] for b in throws)
    assert call["y"] - lowest >= 24, (call, throws)
    grady.page.screenshot(path=f"{SHOTS}/phone-call-target.png", full_page=True)
