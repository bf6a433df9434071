"""The phone's client in a real browser: it reconnects on every close code
except the server's deliberate refusals (4xxx), resends what was never
acknowledged, and resyncs on a missed heartbeat and when the screen wakes.

Daphne serves the real app from a file SQLite database on a loopback port;
Debian's chromium runs ``static/narrator/app.js`` and Playwright's websocket
routing sits between page and server, to drop frames and to close the page's
socket with any code. ``browser`` comes from tests/conftest.py.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

PORTS = range(8430, 8460)  # this suite's share of the loopback ports
ROOT = Path(__file__).resolve().parents[2]
HEARTBEAT_MS = 400  # app.js heartbeat, shortened for the test (window.NARRATOR_HEARTBEAT_MS)
RECONNECT_CODES = [1000, 1001, 1005, 1006, 1011, 1012, 1013]
REFUSAL_CODES = [4401, 4403]

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _free_port() -> int:
    for port in PORTS:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) != 0:
                return port
    raise RuntimeError("no free port in 8430-8459")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """Daphne serving the demo evening; yields (base URL, {username: join link})."""
    data = tmp_path_factory.mktemp("browser-faults")
    port = _free_port()
    env = {
        **os.environ,
        "DATA_DIR": str(data),
        "DATABASE_URL": f"sqlite:///{data / 'narrator.sqlite3'}",
        "SECRET_KEY": "browser-faults-test-key",
        "DEBUG": "False",
        "ALLOWED_HOSTS": "127.0.0.1",
    }
    env.pop("REDIS_URL", None)  # one process: the in-memory layer
    prepared = subprocess.run(
        [sys.executable, "manage.py", "evening", "--no-serve", "--host", "127.0.0.1"]
        + ["--port", str(port)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    links = dict(re.findall(r"Join as (\w+): (\S+)", prepared.stdout))
    daphne = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)]
        + ["narrator.asgi:application"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
        assert time.monotonic() < deadline, "daphne did not start"
        time.sleep(0.1)
    yield f"http://127.0.0.1:{port}", links
    daphne.terminate()
    daphne.wait(timeout=10)


class Wire:
    """Every socket the page opened, with what crossed it; can drop frames."""

    def __init__(self) -> None:
        self.sockets: list[dict] = []
        self.swallow_actions = False  # page -> server action frames vanish

    def handle(self, route) -> None:
        # "muted": server -> page frames of this socket vanish.
        entry = {"route": route, "sent": [], "received": [], "muted": False}
        server = route.connect_to_server()

        def from_page(message):
            entry["sent"].append(message)
            if self.swallow_actions and '"id"' in message:
                self.swallow_actions = False
                entry["swallowed"] = message
                return
            server.send(message)

        def from_server(message):
            if entry["muted"]:
                return
            entry["received"].append(message)
            route.send(message)

        route.on_message(from_page)
        server.on_message(from_server)
        self.sockets.append(entry)


def _wait(page, condition, timeout: float = 10.0) -> float:
    """Let Playwright run (and our handlers with it) until ``condition()``; seconds taken."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, "timed out"
        page.wait_for_timeout(20)
    return time.monotonic() - started


def _phone(browser, server, user: str):
    base, links = server
    context = browser.new_context()
    page = context.new_page()
    page.add_init_script(f"window.NARRATOR_HEARTBEAT_MS = {HEARTBEAT_MS};")
    wire = Wire()
    page.route_web_socket(re.compile(r".*/ws/.*"), wire.handle)
    page.goto(links[user])
    page.wait_for_url(re.compile(r".*/play/\d+/"))
    _wait(page, lambda: page.text_content("#connection") == "Connected")
    # "Connected" shows on open; the view (and its stamp) comes just after.
    _wait(page, lambda: any(m.startswith("<!--v:") for m in wire.sockets[-1]["received"]))
    return context, page, wire


def _connected(page) -> bool:
    return page.text_content("#connection") == "Connected"


def test_the_phone_reconnects_on_every_close_code_but_a_refusal(browser, server):
    context, page, wire = _phone(browser, server, "helen")
    delays = {}
    for code in RECONNECT_CODES:
        count = len(wire.sockets)
        wire.sockets[-1]["route"].close(code=code, reason="test")
        delays[code] = _wait(page, lambda c=count: len(wire.sockets) > c and _connected(page))
        # A new socket names the stamp the screen shows; nothing changed
        # meanwhile, so the server answers "pong" instead of the whole view.
        assert "?v=" in wire.sockets[-1]["route"].url
        _wait(page, lambda: '{"type": "pong"}' in wire.sockets[-1]["received"])
        assert not any(m.startswith("<!--v:") for m in wire.sockets[-1]["received"])
    for code in REFUSAL_CODES:
        count = len(wire.sockets)
        wire.sockets[-1]["route"].close(code=code, reason="test")
        _wait(page, lambda: "Refused" in page.text_content("#connection"))
        page.wait_for_timeout(1500)  # three times the longest first reconnect delay (0.5 s)
        assert len(wire.sockets) == count, f"reconnected after {code}"
        assert str(code) in page.text_content("#connection")
        page.reload()  # the player logs in again / reopens the page
        _wait(page, lambda: _connected(page))
    context.close()
    print(
        "\n[faults] browser reconnect after close code: "
        + ", ".join(f"{code} {delay:.2f} s" for code, delay in delays.items())
        + f"; no reconnect after {', '.join(map(str, REFUSAL_CODES))}"
    )
    assert max(delays.values()) < 5  # backoff capped at 4 s, first retry under 0.5 s


def test_an_unacknowledged_action_is_resent_with_its_id_after_a_reconnect(browser, server):
    context, page, wire = _phone(browser, server, "grady")
    wire.swallow_actions = True
    start = page.locator("details.start")
    if start.get_attribute("open") is None:
        page.click("details.start > summary")
    page.locator(".opponents input[type=radio]").first.check()
    page.locator(".bid button").first.click()
    _wait(page, lambda: "swallowed" in wire.sockets[-1])
    lost = json.loads(wire.sockets[-1]["swallowed"])
    count = len(wire.sockets)
    wire.sockets[-1]["route"].close(code=1006, reason="network gone")
    _wait(page, lambda: len(wire.sockets) > count)
    _wait(page, lambda: any(f'"{lost["id"]}"' in m for m in wire.sockets[-1]["sent"]))
    resent = [json.loads(m) for m in wire.sockets[-1]["sent"] if lost["id"] in m]
    assert resent[0] == lost  # the same action, the same id
    _wait(page, lambda: any(lost["id"] in m and '"ok"' in m for m in wire.sockets[-1]["received"]))
    _wait(page, lambda: page.locator("section.challenges").count() == 1)
    context.close()


def test_a_missed_heartbeat_resyncs_then_reconnects_and_waking_resyncs(browser, server):
    context, page, wire = _phone(browser, server, "camille")
    first = wire.sockets[-1]
    _wait(page, lambda: sum('"ping"' in m for m in first["sent"]) >= 2)
    ping = json.loads([m for m in first["sent"] if '"ping"' in m][-1])
    view = [m for m in first["received"] if m.startswith("<!--v:")][-1]
    assert ping["v"] == view[6 : view.index("-->")]  # the ping echoes the view's stamp

    # The screen wakes: a full resync is asked at once.
    page.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
    _wait(page, lambda: '{"action":"sync"}' in first["sent"])

    # The server falls silent: one missed heartbeat asks for a resync, two reconnect.
    sent_before = len(first["sent"])
    first["muted"] = True
    count = len(wire.sockets)
    _wait(page, lambda: '{"action":"sync"}' in first["sent"][sent_before:], timeout=5)
    waited = _wait(page, lambda: len(wire.sockets) > count and _connected(page), timeout=5)
    context.close()
    print(
        f"\n[faults] browser heartbeat ({HEARTBEAT_MS} ms in the test): a silent server "
        f"got a resync request, then a new socket {waited:.2f} s later"
    )
