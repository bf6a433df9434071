"""Narrator is installable: a web app manifest linked from every page, with
icons that exist at the sizes it says, and a service worker served from the
site's root (its scope: the whole site)."""

from __future__ import annotations

import json
import struct

import pytest
from django.contrib.staticfiles import finders


def _png_size(path: str) -> tuple[int, int]:
    with open(path, "rb") as png:
        head = png.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def test_the_manifest_names_the_app_and_its_icons_exist_at_their_sizes(client):
    response = client.get("/manifest.webmanifest")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/manifest+json"
    manifest = json.loads(response.content)
    assert manifest["name"] == "Narrator" and manifest["start_url"] == "/"
    assert manifest["display"] == "standalone"
    purposes = set()
    for icon in manifest["icons"]:
        name = icon["src"].removeprefix("/static/")
        found = finders.find(name)
        assert found, f"{icon['src']} is not a static file"
        width, height = map(int, icon["sizes"].split("x"))
        assert _png_size(found) == (width, height) and icon["type"] == "image/png"
        purposes.add(icon.get("purpose", "any"))
    assert {"any", "maskable"} <= purposes
    assert any(icon["sizes"] == "512x512" for icon in manifest["icons"])


@pytest.mark.django_db
def test_every_page_links_the_manifest_and_loads_the_phone_script(client):
    page = client.get("/accounts/login/").content.decode()
    assert '<link rel="manifest" href="/manifest.webmanifest">' in page
    assert "narrator/phone.js" in page


def test_the_service_worker_is_served_from_the_root_for_the_whole_site(client):
    response = client.get("/sw.js")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert response["Service-Worker-Allowed"] == "/"
    assert response["Cache-Control"] == "no-cache"
    script = response.content.decode()
    assert 'var STATIC = new URL("/static/"' in script
    assert "Offline: this page was never opened on this phone" in script
