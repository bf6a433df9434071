"""A smoke run of ``manage.py bench --quick``: it starts its own Daphne workers
on loopback (ports 8580-8591) and a throwaway SQLite database, so it runs as a
subprocess, outside pytest's test database."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from django.conf import settings

pytestmark = [pytest.mark.slow, pytest.mark.workers]

SCENARIOS = ("connect", "paced", "saturation", "burst", "time_out", "reconnect")


def _table(text: str) -> list[dict[str, str]]:
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    head = [cell.strip() for cell in lines[0].strip("|").split("|")]
    return [
        dict(zip(head, (c.strip() for c in line.strip("|").split("|")), strict=True))
        for line in lines[1:]
    ]


def test_a_quick_bench_prints_every_scenario_with_nothing_lost_doubled_or_closed(tmp_path):
    out = tmp_path / "bench.md"
    done = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "bench",
            "--quick",
            "--port-base",
            "8580",
            # A row that never finds idle workers, or a frame that never comes,
            # fails an assertion below instead of the subprocess timeout.
            "--idle-cap",
            "30",
            "--wait",
            "30",
            "--output",
            str(out),
        ],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = _table(done.stdout)
    assert {(r["scenario"], r["app"]) for r in rows} == {
        (s, app) for s in SCENARIOS for app in ("narrator", "bare")
    }
    for row in rows:
        assert int(row["n"]) > 0, row
        assert (row["lost"], row["doubled"], row["closed"]) == ("0", "0", "0"), row
        # Every row but the first waited for idle workers and says how long.
        if row is not rows[0]:
            assert re.match(r"waited \d+ s for idle", row["note"]), row
    notes = {(r["scenario"], r["app"]): r["note"] for r in rows}
    for app in ("narrator", "bare"):
        assert re.search(r"\b\d+ of 20 results after 2 s", notes["burst", app]), notes
        assert re.search(
            r"after the drop waited \d+ s for idle, 40 of 40 back in", notes["reconnect", app]
        ), notes
    assert "0 challenges with a doubled loss" in done.stdout
    assert out.read_text().strip() == done.stdout.strip()
