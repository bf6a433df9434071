"""Worker CPU of one narrator dashboard's whole view (issue 14): the session
crowded with ``CROWD`` present characters and challenges, the view rendered
``ROUNDS`` times as ``NarrateConsumer._render_view`` does (stamp query,
``views.dashboard_context``, ``narrate_live.html``). Prints ms of CPU per view
and, with ``PROFILE=1``, the top of a cProfile. Run:
``.venv/bin/python -m pytest tests/challenges/measure_dashboard_view.py -q -s -p no:cacheprovider``.
Not part of the suite (no ``test_`` prefix)."""

from __future__ import annotations

import cProfile
import os
import pstats
import statistics
import time

import pytest
from django.template.loader import render_to_string

from challenges import heartbeat, views
from tests.factories import crowded_session, narrated_chronicle

pytestmark = pytest.mark.django_db

ROUNDS = int(os.getenv("ROUNDS", "10"))
CROWD = int(os.getenv("CROWD", "1500"))


def _view(session) -> str:
    heartbeat.dashboard_parts(session.pk, views.DASHBOARD_LIMIT)
    context = views.dashboard_context(session)
    return render_to_string("challenges/narrate_live.html", context)


def test_measure_a_dashboards_whole_view():
    table = narrated_chronicle("Crowd")
    session = table["session"]
    crowded_session(session, characters=CROWD, challenges=2 * CROWD)
    _view(session)  # templates loaded
    times = []
    for _ in range(ROUNDS):
        start = time.process_time()
        html = _view(session)
        times.append(time.process_time() - start)
    print(
        f"\n[dashboard view] {CROWD} present, {len(html)} characters of HTML: "
        f"median {statistics.median(times) * 1000:.0f} ms CPU, min {min(times) * 1000:.0f} ms"
    )
    if os.getenv("PROFILE"):
        profile = cProfile.Profile()
        profile.runcall(_view, session)
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)
