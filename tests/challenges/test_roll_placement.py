"""Issue 14: ``views.place_rolls``, the frame that turns the roll list a
screen shows into the one a fresh render lists, applied by ``tests.screen``
as htmx would: every case ends with the fresh list, in order, the changed
cards new; the cases a frame of changed cards cannot say give None."""

from __future__ import annotations

import re

import pytest

from challenges.views import place_rolls
from tests.screen import Screen


def _card(pk: int, text: str = "old") -> str:
    return f'<article class="card roll" id="roll-{pk}" data-roll="{pk}">{text}</article>'


def _screen(shown: list[int], empty: bool) -> Screen:
    screen = Screen()
    cards = "".join(_card(pk) for pk in shown)
    line = '<p class="waiting">No rolls yet tonight.</p>' if empty and not shown else ""
    screen.apply(f'<main><section id="rolls">{cards}{line}</section></main>')
    return screen


@pytest.mark.parametrize(
    ("shown", "listed", "changed"),
    [
        ([3, 2, 1], [3, 2, 1], [2]),  # a card replaced in place
        ([3, 2, 1], [4, 3, 2], [4]),  # a new roll on top, the oldest beyond the list goes
        ([5, 3, 2, 1], [5, 2, 3, 1], [3]),  # waiting to done: it moves below a newer result
        ([5, 3, 2], [5, 2], [3]),  # done beyond the results shown: it goes
        ([], [7], [7]),  # a phone's first roll
        ([9, 8], [9, 8, 6], [6]),  # a roll put last
        ([9, 8, 7], [6, 9, 8], [6]),  # a waiting roll on top of the results
        ([4, 3, 2, 1], [1, 3, 4], [1, 4]),  # two cards moved
    ],
)
def test_the_frame_leaves_the_list_a_fresh_render_shows(shown, listed, changed):
    screen = _screen(shown, empty=False)
    cards = {pk: _card(pk, "new") for pk in changed}
    frame, now = place_rolls(shown, listed, cards, "rolls", empty=False)
    assert now == listed
    screen.apply(frame)
    drawn = re.findall(r'id="roll-(\d+)"[^>]*>(\w+)<', str(screen))
    assert [int(pk) for pk, _ in drawn] == listed
    assert {int(pk) for pk, text in drawn if text == "new"} == set(changed) & set(listed)


@pytest.mark.parametrize(
    ("shown", "listed", "changed", "empty"),
    [
        ([3, 2], [4, 3, 2], [], False),  # a roll it should list, never sent
        ([3, 2], [2, 3], [], False),  # the cards kept are out of order
        ([], [1], [1], True),  # the "No rolls yet" line would stay
        ([1], [], [], True),  # ... or would have to come
    ],
)
def test_what_a_frame_of_cards_cannot_say_needs_the_whole_list(shown, listed, changed, empty):
    cards = {pk: _card(pk, "new") for pk in changed}
    assert place_rolls(shown, listed, cards, "rolls", empty=empty) is None
