"""Every card of ``card_corpus`` (each stage of a MET challenge, both sides),
as a phone's card frame places it (replaced, opened, moved to the results),
and every sheet of it (``_sheet.html``, out of band) renders byte for byte as
recorded in ``snapshots/cards.json`` and ``snapshots/sheets.json``: a change
made to render them faster (issue 14) cannot change what a player sees. A
change meant to alter them records them anew:
``NARRATOR_SNAPSHOTS=write pytest tests/challenges/test_card_snapshots.py``,
and the diff of the JSON shows what players will see differently."""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

import pytest
from django.template.loader import render_to_string

from tests.challenges.card_corpus import cards, sheets

SNAPSHOTS = Path(__file__).parent / "snapshots"
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


def _as_recorded(now: dict[str, str], name: str) -> None:
    """``now`` (name: HTML) is what ``snapshots/<name>`` holds, or is
    recorded there with NARRATOR_SNAPSHOTS=write."""
    path = SNAPSHOTS / name
    if os.getenv("NARRATOR_SNAPSHOTS") == "write":
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(now, indent=1, ensure_ascii=False) + "\n")
        pytest.skip(f"recorded {len(now)} renderings in {path}")
    recorded = json.loads(path.read_text())
    assert now.keys() == recorded.keys()
    for key, html in now.items():
        if html != recorded[key]:
            diff = difflib.unified_diff(
                recorded[key].splitlines(), html.splitlines(), "recorded", "now", lineterm=""
            )
            pytest.fail(f"{key} differs:\n" + "\n".join(diff))


def test_every_card_renders_as_recorded():
    _as_recorded(rendered(), "cards.json")


def test_every_sheet_renders_as_recorded():
    # Twice each: the second rendering may come from what the first kept.
    for _ in range(2):
        _as_recorded(
            {
                name: render_to_string("challenges/_sheet.html", {"sheet": sheet, "oob": True})
                for name, sheet in sheets()
            },
            "sheets.json",
        )


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
