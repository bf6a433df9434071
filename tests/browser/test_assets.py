"""The front end the phones run: htmx 2 and its ws extension, vendored in
``static/vendor/htmx/`` with their licence, pinned by version and checksum, and
really loaded by the page."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.test_evening import log_in

VENDOR = Path(__file__).resolve().parents[2] / "static" / "vendor" / "htmx"
ROW = re.compile(r"^\| `(?P<file>[^`]+)` \|.*\| `(?P<sha>[0-9a-f]{64})` \|$", re.MULTILINE)


def test_vendored_htmx_files_match_the_checksums_in_source_md_and_carry_a_licence():
    rows = {m["file"]: m["sha"] for m in ROW.finditer((VENDOR / "SOURCE.md").read_text())}
    assert set(rows) == {"htmx-2.0.10.min.js", "ws-2.min.js"}
    for name, sha in rows.items():
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == sha, name
    licence = (VENDOR / "LICENSE").read_text()
    assert "BSD 2-Clause" in licence and "Big Sky Software" in licence


@pytest.mark.browser
def test_a_phone_loads_htmx_2_0_10_and_the_ws_extension_from_static(live, phone):
    page = phone()
    scripts = []
    page.on("response", lambda r: scripts.append((r.url, r.status)) if ".js" in r.url else None)
    log_in(page, live("/accounts/login/"), "helen")
    expect(page.locator("#connection")).to_have_text("Connected")  # once the open socket answered
    assert page.evaluate("htmx.version") == "2.0.10"
    # The ws extension is registered: htmx processed ws-connect into a live socket.
    assert page.evaluate("!!htmx.find('#socket')['htmx-internal-data'].webSocket")
    loaded = {url.rsplit("/static/", 1)[-1]: status for url, status in scripts}
    assert loaded == {
        "vendor/htmx/htmx-2.0.10.min.js": 200,
        "vendor/htmx/ws-2.min.js": 200,
        "narrator/app.js": 200,
        "narrator/phone.js": 200,
    }
