"""Worker CPU of one dashboard feed's flush (issue 14): ``render_changes``
with one changed challenge row and its two characters' roster rows, in a
session crowded with ``CROWD`` present characters, as a paced challenge's
result makes (``challenges.consumers.feed``). Prints ms of CPU per flush and,
with ``PROFILE=1``, the top of a cProfile. Run:
``.venv/bin/python -m pytest tests/challenges/measure_flush.py -q -s -p no:cacheprovider``.
Not part of the suite (no ``test_`` prefix)."""

from __future__ import annotations

import cProfile
import os
import pstats
import statistics
import time

import pytest

from challenges.consumers.feed import render_changes
from challenges.models import Challenge
from tests.factories import crowded_session, narrated_chronicle

pytestmark = pytest.mark.django_db

ROUNDS = int(os.getenv("ROUNDS", "200"))
CROWD = int(os.getenv("CROWD", "1500"))


def test_measure_a_feeds_flush():
    table = narrated_chronicle("Crowd")
    session = table["session"]
    crowded_session(session, characters=CROWD, challenges=2 * CROWD)
    row = Challenge.objects.filter(session=session).order_by("-pk").first()
    both = {row.challenger_id: None, row.defender_id: None}

    def flush(rows=True, roster=True):
        return render_changes(
            session, {row.pk: None} if rows else {}, both if roster else {}, set()
        )

    flush()  # templates loaded
    for label, kwargs in (
        ("row + 2 roster rows", {}),
        ("challenge row only", {"roster": False}),
        ("2 roster rows only", {"rows": False}),
    ):
        times = []
        for _ in range(ROUNDS):
            start = time.process_time()
            flush(**kwargs)
            times.append(time.process_time() - start)
        print(
            f"\n[flush] {label}: median {statistics.median(times) * 1000:.2f} ms CPU, "
            f"min {min(times) * 1000:.2f} ms"
        )
    if os.getenv("PROFILE"):
        profile = cProfile.Profile()
        profile.runcall(lambda: [flush(rows=False) for _ in range(50)])
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)
