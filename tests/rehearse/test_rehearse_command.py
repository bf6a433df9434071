"""``manage.py rehearse`` end to end: it runs as a subprocess on a throwaway
SQLite database (its own ``DATA_DIR``), serves Narrator itself with Daphne on
a free loopback port, fills the history, plays through real websockets, and
leaves a consistent play history behind."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from django.conf import settings

pytestmark = [pytest.mark.slow, pytest.mark.workers]

CHARACTERS = 20
FILLED = 30

# What the rehearsal left in its session, read by the project's own code.
TALLY = """
import json
from bench.rehearsal import CHRONICLE, tally
from characters.models import Chronicle
from challenges.models import Challenge, DiceRoll, Event
chronicle = Chronicle.objects.get(name=CHRONICLE)
session = chronicle.sessions.get()
print(json.dumps({
    "ruleset": chronicle.ruleset,
    "characters": chronicle.characters.count(),
    "present": session.presences.count(),
    "resolved without events": Challenge.objects.filter(session=session, stage="resolved")
        .exclude(events__kind="resolved").count(),
    "rolled without events": len(
        set(DiceRoll.objects.filter(session=session, rolled_at__isnull=False)
            .values_list("pk", flat=True))
        - {e["roll"] for e in Event.objects.filter(
            session=session, kind__in=("roll_rolled", "roll_contested")
        ).values_list("data", flat=True)}
    ),
    **tally(session.pk),
}))
"""


def _env(tmp_path) -> dict[str, str]:
    """The command's environment: a SQLite database and static files of its own."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(DATA_DIR=str(tmp_path), LOG_LEVEL="WARNING")
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _manage(env, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _rehearse_args(ruleset: str, *extra: str) -> list[str]:
    return [
        "rehearse",
        "--ruleset",
        ruleset,
        "--characters",
        str(CHARACTERS),
        "--challenges",
        str(FILLED),
        "--rate",
        "120",
        "--host",
        "127.0.0.1",
        "--port",
        str(_free_port()),
        *extra,
    ]


@pytest.mark.parametrize("ruleset", ["met_classic", "bns", "storytelling"])
def test_a_rehearsal_fills_the_history_then_plays_it_through_the_sockets_consistently(
    ruleset, tmp_path
):
    env = _env(tmp_path)
    done = _manage(env, *_rehearse_args(ruleset, "--duration", "6"), timeout=90)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Join as narrator: http://127.0.0.1:" in done.stdout
    assert "&next=/narrate/" in done.stdout
    assert "Join as admin: " in done.stdout

    shell = _manage(env, "shell", "-c", TALLY)
    assert shell.returncode == 0, shell.stderr[-3000:]
    found = json.loads(shell.stdout.splitlines()[-1])
    assert found["ruleset"] == ruleset
    assert (found["characters"], found["present"]) == (CHARACTERS, CHARACTERS)
    # The fill wrote at most FILLED results; more came through the phones.
    results = found["rolled"] if ruleset == "storytelling" else found["resolved"]
    assert results > FILLED, (found, done.stdout)
    assert found["events"] > results
    assert found["resolved without events"] == found["rolled without events"] == 0
    seen = int(done.stdout.split("Played through the phones: ")[1].split()[0])
    assert seen >= 1, done.stdout

    check = _manage(env, "checkstate")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "The play history is consistent." in check.stdout


def test_ctrl_c_stops_a_rehearsal_cleanly_with_a_summary(tmp_path):
    rehearsal = subprocess.Popen(
        [sys.executable, "manage.py", *_rehearse_args("met_classic")],
        cwd=settings.BASE_DIR,
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = rehearsal.stdout.readline()
            lines.append(line)
            if "playing." in line or not line:
                break
        assert "playing." in lines[-1], "".join(lines)
        time.sleep(3)  # a few challenges in flight
        stopped = time.monotonic()
        rehearsal.send_signal(signal.SIGINT)
        out, err = rehearsal.communicate(timeout=15)
        took = time.monotonic() - stopped
    finally:
        if rehearsal.poll() is None:
            rehearsal.kill()
            rehearsal.wait()
    assert rehearsal.returncode == 0, err[-3000:]
    assert took < 5, took
    assert "Rehearsal over after" in out
    assert "Played through the phones: " in out
    assert "Traceback" not in err
