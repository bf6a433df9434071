"""Every card of ``card_corpus`` (each stage of a MET challenge, both sides),
as a phone's card frame places it (replaced, opened, moved to the results),
renders byte for byte as recorded in ``snapshots/cards.json``: a change made
to render cards faster (issue 14) cannot change what a player sees. A change
meant to alter the cards records them anew:
``NARRATOR_SNAPSHOTS=write pytest tests/challenges/test_card_snapshots.py``,
and the diff of ``cards.json`` shows what players will see differently."""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

import pytest
from django.template.loader import render_to_string

from tests.challenges.card_corpus import cards

SNAPSHOTS = Path(__file__).parent / "snapshots" / "cards.json"
PLACES = ("replace", "open", "done")


def frame(card, where: str) -> str:
    """One card frame as ``PlayConsumer._render_change`` renders it."""
    remove = [41, 42] if where == "done" else []
    return render_to_string(
        "challenges/_card_frame.html", {"card": card, "where": where, "remove": remove}
    )


def rendered() -> dict[str, str]:
    out = {}
    for n, (name, card) in enumerate(cards()):
        # Each case in one place, turn about, so that all three are covered.
        out[name] = frame(card, PLACES[n % len(PLACES)])
    return out


def test_every_card_renders_as_recorded():
    now = rendered()
    if os.getenv("NARRATOR_SNAPSHOTS") == "write":
        SNAPSHOTS.parent.mkdir(exist_ok=True)
        SNAPSHOTS.write_text(json.dumps(now, indent=1, ensure_ascii=False) + "\n")
        pytest.skip(f"recorded {len(now)} cards in {SNAPSHOTS}")
    recorded = json.loads(SNAPSHOTS.read_text())
    assert now.keys() == recorded.keys()
    for name, html in now.items():
        if html != recorded[name]:
            diff = difflib.unified_diff(
                recorded[name].splitlines(), html.splitlines(), "recorded", "now", lineterm=""
            )
            pytest.fail(f"{name} differs:\n" + "\n".join(diff))


def test_the_corpus_covers_every_control_and_line_of_the_card():
    """The corpus is worth its name: every form and every kind of line a
    MET card can show is in at least one recorded card."""
    every = "".join(rendered().values())
    for action in (
        "challenge.bid",
        "challenge.relent",
        "challenge.preempt",
        "challenge.add_bid",
        "challenge.throw",
        "challenge.negative",
        "challenge.blood",
        "challenge.declare",
        "challenge.retest",
        "challenge.accept",
        "challenge.answer",
        "challenge.call_narrator",
    ):
        assert f'value="{action}"' in every, action
    for part in (
        'class="bids"',
        'class="declared"',
        'class="modifiers"',
        'class="test"',
        'class="compared"',
        'class="pending"',
        'class="waiting"',
        'class="call"',
        'class="ruling"',
        'class="history"',
        'class="outcome won"',
        'class="outcome lost"',
        'class="reveal"',
        'class="stakes"',
        "Difficulty:",
        "Difficult test",
        "bid two",
        'name="weapon"',
        "Cancel it with your",
        "Answer with",
        "Spend Willpower",
        'hx-swap-oob="true"',
        "beforeend:#open-cards",
        "afterbegin:#done-cards",
        'hx-swap-oob="delete"',
    ):
        assert part in every, part
