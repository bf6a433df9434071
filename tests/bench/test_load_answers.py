"""What the bench counts as a socket's first answer after a reconnect
(bench.load.FIRST_ANSWER): a whole view, pong, or the Time out banner alone."""

from __future__ import annotations

import pytest

from bench.load import FIRST_ANSWER, _answer_kind

STAMP = "<!--v:0123456789abcdef-->"


@pytest.mark.parametrize(
    ("frame", "kind"),
    [
        (STAMP + '<div id="live" hx-swap-oob="true">…</div>', "view"),
        (
            STAMP + '<!--heartbeat--><div id="time-out" class="time-out"></div><div id="live">',
            "view",
        ),
        (STAMP + '<div id="time-out" class="time-out active" hx-swap-oob="true">', "banner"),
        ('<section id="challenge-list">', "view"),
        ('{"type": "pong"}', "pong"),
    ],
)
def test_a_first_answer_is_told_apart(frame, kind):
    found = FIRST_ANSWER.search(frame)
    assert found is not None and _answer_kind(found.group(1)) == kind


def test_a_time_out_banner_later_in_a_frame_is_not_a_first_answer():
    assert FIRST_ANSWER.search('{"type": "ack"} <div id="time-out">') is None
