"""What the bench counts as a socket's first answer after a reconnect
(bench.load.FIRST_ANSWER): a whole view, pong, the Time out banner alone, or
the cards that changed while away (``PlayConsumer._replay``)."""

from __future__ import annotations

import asyncio

import pytest

from bench import load
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
        (STAMP + '<article id="card-7" hx-swap-oob="delete"></article><div hx-sw', "cards"),
        (STAMP + '<div hx-swap-oob="afterbegin:#done-cards"><article id="card-7"', "cards"),
        (STAMP + '<div hx-swap-oob="beforeend:#open-cards"><article id="card-7"', "cards"),
        (STAMP + '<article id="card-7" class="card" data-version="3" hx-swap-oob="true">', "cards"),
    ],
)
def test_a_first_answer_is_told_apart(frame, kind):
    found = FIRST_ANSWER.search(frame)
    assert found is not None and _answer_kind(found.group(1)) == kind


def test_a_time_out_banner_later_in_a_frame_is_not_a_first_answer():
    assert FIRST_ANSWER.search('{"type": "ack"} <div id="time-out">') is None


def test_the_bench_knows_how_many_results_a_dashboard_lists():
    from challenges import views

    assert views.DASHBOARD_LIMIT.results == load.DASHBOARD_RESULTS


async def test_a_result_never_shown_is_lost_only_while_it_belongs_in_the_dashboards_list():
    """Ten results; a dashboard never showed the oldest (nine came after it:
    it had left the list of the eight newest) nor the newest (lost)."""
    from types import SimpleNamespace

    from bench.report import Result

    loop = asyncio.get_running_loop()
    seen = []
    for n in range(10):
        future = loop.create_future()
        if n not in (0, 9):
            future.set_result((n + 0.5, "frame"))
        seen.append((float(n), [future]))
    target = SimpleNamespace(dashboard_seen=seen)
    result = Result("paced", "memory/1w/sqlite", "narrator")
    waited = load.WAIT
    load.set_wait(0.05)
    try:
        await load.collect_dashboards(target, result)
    finally:
        load.set_wait(waited)
    assert (result.dashboard_lost, result.dashboard_windowed) == (1, 1)
    assert len(result.dashboard_latencies) == 8
