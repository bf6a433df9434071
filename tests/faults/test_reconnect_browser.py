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
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.ports import listening_socket

PORTS = range(8430, 8460)  # this suite's share of the loopback ports
ROOT = Path(__file__).resolve().parents[2]
# app.js's heartbeat (10 s), shortened for the heartbeat test only (window.NARRATOR_HEARTBEAT_MS).
# Not shorter: a loaded machine answering a ping late would look like a dead socket and
# reconnect on its own; the other tests keep 10 s so no heartbeat crosses what they do.
HEARTBEAT_MS = 1000
RECONNECT_CODES = [1000, 1001, 1005, 1006, 1011, 1012, 1013]
REFUSAL_CODES = [4401, 4403]
BACKOFF_CAP_MS = 4000  # app.js: no reconnect delay is longer than this
FIRST_RETRY_MS = 500  # app.js: the first retry after an open waits less than this
START_TIMEOUT = 120  # seconds to build the evening and start Daphne (a loaded machine is slow)
WAIT = 30.0  # seconds a condition may take on a loaded machine before the test fails

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """Daphne serving the demo evening; yields (base URL, {username: join link})."""
    data = tmp_path_factory.mktemp("browser-faults")
    sock = listening_socket(PORTS)
    port = sock.getsockname()[1]
    env = {
        **os.environ,
        "DATA_DIR": str(data),
        "DATABASE_URL": f"sqlite:///{data / 'narrator.sqlite3'}",
        "SECRET_KEY": "browser-faults-test-key",
        "DEBUG": "False",
        "ALLOWED_HOSTS": "127.0.0.1",
    }
    env.pop("REDIS_URL", None)  # one process: the in-memory layer
    try:
        prepared = subprocess.run(
            [sys.executable, "manage.py", "evening", "--no-serve", "--host", "127.0.0.1"]
            + ["--port", str(port)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT,
            check=True,
        )
        daphne = subprocess.Popen(
            [sys.executable, "-m", "daphne", "--fd", str(sock.fileno())]
            + ["narrator.asgi:application"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(sock.fileno(),),
        )
    finally:
        sock.close()  # Daphne holds its own copy
    links = dict(re.findall(r"Join as (\w+): (\S+)", prepared.stdout))
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_serving(daphne, base)
        yield base, links
    finally:
        daphne.terminate()
        try:
            daphne.wait(timeout=10)
        except subprocess.TimeoutExpired:
            daphne.kill()
            daphne.wait()


def _wait_until_serving(daphne: subprocess.Popen, base: str) -> None:
    """Until Daphne answers ``/healthz`` (the port listens from the start: our
    socket); AssertionError if it dies or takes ``START_TIMEOUT`` seconds."""
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        assert daphne.poll() is None, f"daphne exited with {daphne.returncode}"
        assert time.monotonic() < deadline, "daphne did not start"
        time.sleep(0.1)  # polling a starting process; nothing to wait on


class Wire:
    """Every socket the page opened, with what crossed it; can drop frames.

    ``log`` holds everything in the order it happened: ("open", socket index,
    ""), ("sent", index, frame) page -> server, ("received", index, frame)
    server -> page (muted frames are not received)."""

    def __init__(self) -> None:
        self.sockets: list[dict] = []
        self.log: list[tuple[str, int, str]] = []
        self.swallow_actions = False  # page -> server action frames vanish

    def handle(self, route) -> None:
        # "muted": server -> page frames of this socket vanish.
        entry = {"route": route, "sent": [], "received": [], "muted": False}
        index = len(self.sockets)
        server = route.connect_to_server()

        def from_page(message):
            entry["sent"].append(message)
            self.log.append(("sent", index, message))
            if self.swallow_actions and '"id"' in message:
                self.swallow_actions = False
                entry["swallowed"] = message
                return
            server.send(message)

        def from_server(message):
            if entry["muted"]:
                return
            entry["received"].append(message)
            self.log.append(("received", index, message))
            route.send(message)

        route.on_message(from_page)
        server.on_message(from_server)
        self.sockets.append(entry)
        self.log.append(("open", index, ""))


def _wait(page, condition, timeout: float = WAIT) -> float:
    """Let Playwright run (and our handlers with it) until ``condition()``; seconds
    taken. ``timeout`` only bounds a hang: what the tests assert is the order of
    events, never how fast a (possibly loaded) machine produced them."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, "timed out"
        page.wait_for_timeout(20)
    return time.monotonic() - started


def _phone(browser, server, user: str, heartbeat_ms: int | None = None):
    """``user``'s phone, connected; app.js's own heartbeat unless ``heartbeat_ms``."""
    base, links = server
    context = browser.new_context()
    page = context.new_page()
    if heartbeat_ms is not None:
        page.add_init_script(f"window.NARRATOR_HEARTBEAT_MS = {heartbeat_ms};")
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


def _record_reconnect_delays(page) -> None:
    """Wrap app.js's ``htmx.config.wsReconnectDelay`` (used by app.js and by
    htmx's ws extension for every delayed reconnect) to keep each delay it
    chooses, in milliseconds, in ``window.reconnectDelays``."""
    page.evaluate(
        """() => {
            const choose = htmx.config.wsReconnectDelay;
            window.reconnectDelays = [];
            htmx.config.wsReconnectDelay = (retry) => {
                const delay = choose(retry);
                window.reconnectDelays.push(delay);
                return delay;
            };
        }"""
    )


def _steady_ping(wire: Wire, index: int) -> tuple[dict, str] | None:
    """A ping of socket ``index`` sent a whole heartbeat after its latest view
    arrived (a ping sent just as a view arrives may carry the stamp before it),
    with that view; None until there is one."""
    view, pings_since = None, 0
    for what, where, message in wire.log:
        if where != index:
            continue
        if what == "received" and message.startswith("<!--v:"):
            view, pings_since = message, 0
        elif what == "sent" and '"ping"' in message and view is not None:
            pings_since += 1
            if pings_since == 2:
                return json.loads(message), view
    return None


def test_the_phone_reconnects_on_every_close_code_but_a_refusal(browser, server):
    context, page, wire = _phone(browser, server, "helen")
    _record_reconnect_delays(page)
    delays, chosen = {}, {}
    for code in RECONNECT_CODES:
        count = len(wire.sockets)
        before = page.evaluate("window.reconnectDelays.length")
        wire.sockets[-1]["route"].close(code=code, reason="test")
        delays[code] = _wait(page, lambda c=count: len(wire.sockets) > c and _connected(page))
        chosen[code] = page.evaluate(f"window.reconnectDelays.slice({before})")
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
    # Backoff: every reconnect waited a delay app.js chose, the first retry
    # under 0.5 s, none over the 4 s cap (the delays chosen, not wall time).
    for code, chosen_ms in chosen.items():
        assert chosen_ms, f"{code}: reconnected without a backoff delay"
        assert chosen_ms[0] < FIRST_RETRY_MS, (code, chosen_ms)
        assert max(chosen_ms) <= BACKOFF_CAP_MS, (code, chosen_ms)


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
    context, page, wire = _phone(browser, server, "camille", heartbeat_ms=HEARTBEAT_MS)
    index = len(wire.sockets) - 1
    first = wire.sockets[index]
    _wait(page, lambda: _steady_ping(wire, index) is not None)
    ping, view = _steady_ping(wire, index)
    assert ping["v"] == view[6 : view.index("-->")]  # the ping echoes the view's stamp

    # The screen wakes: a full resync is asked at once.
    page.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
    _wait(page, lambda: '{"action":"sync"}' in first["sent"])
    assert len(wire.sockets) == index + 1, "the phone reconnected on its own"

    # The server falls silent: one missed heartbeat asks for a resync, two reconnect.
    sent_before = len(first["sent"])
    muted_at = len(wire.log)
    first["muted"] = True
    count = len(wire.sockets)
    _wait(page, lambda: '{"action":"sync"}' in first["sent"][sent_before:])
    waited = _wait(page, lambda: len(wire.sockets) > count and _connected(page))
    context.close()
    # In that order: the resync was asked on the silent socket before the new one opened.
    after = wire.log[muted_at:]
    resync = after.index(("sent", index, '{"action":"sync"}'))
    assert resync < after.index(("open", count, "")), after
    print(
        f"\n[faults] browser heartbeat ({HEARTBEAT_MS} ms in the test): a silent server "
        f"got a resync request, then a new socket {waited:.2f} s later"
    )
