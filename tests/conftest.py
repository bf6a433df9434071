"""Shared test setup.

- ``browser``: Debian's chromium (/usr/bin/chromium), headless, driven by
  Playwright; one for the whole run (a second sync Playwright cannot start
  while one runs). Without chromium, tests marked ``browser`` skip, unless
  ``NARRATOR_REQUIRE_BROWSER=1`` (then collection fails).

- Plain static storage (no collectstatic needed) and fast password hashing.
- Every test runs on the in-memory channel layer, except tests marked
  ``redis``, which run on channels-redis at ``REDIS_URL`` (skipped when unset).
- The per-process caches of challenge rows, renderings and heartbeat
  snapshots start empty (test databases reuse ids).
- The rules tests need no Django at all; they also run with ``-p no:django``.
"""

import os
import uuid
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _test_settings(request):
    if not request.config.pluginmanager.hasplugin("django"):
        return
    settings = request.getfixturevalue("settings")
    settings.STORAGES = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    from challenges import heartbeat, rows, views
    from challenges.consumers import base, feed

    base._failed_logins = None  # each test's sockets start with no failed logins
    rows.committed_rows.items.clear()
    views.shared_renders.items.clear()
    heartbeat.phones.clear()
    feed._feeds.clear()
    if request.node.get_closest_marker("redis"):
        from narrator.settings import redis_layer_host

        url = os.getenv("REDIS_URL")
        if not url:
            pytest.skip("REDIS_URL is not set")
        settings.CHANNEL_LAYERS = {
            "default": {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                "CONFIG": {
                    "hosts": [redis_layer_host(url)],
                    "prefix": f"test-{uuid.uuid4().hex[:8]}",
                },
            }
        }
    else:
        settings.CHANNEL_LAYERS = {"default": {"BACKEND": "narrator.layers.InMemoryChannelLayer"}}


@pytest.fixture
def heartbeat_clock(monkeypatch):
    """``challenges.heartbeat.now`` on a test clock: one millisecond later on
    each reading (so stamps and snapshots keep their order whatever the
    machine's speed), and ``advance(seconds)`` later on demand."""

    class Clock:
        moment = 1000.0

        def now(self) -> float:
            self.moment += 0.001
            return self.moment

        def advance(self, seconds: float) -> None:
            self.moment += seconds

    from challenges import heartbeat

    clock = Clock()
    monkeypatch.setattr(heartbeat, "now", clock.now)
    return clock


@pytest.fixture(autouse=True)
def _close_sync_thread_connections(request):
    """After each test, close the database connections of the thread where
    ``database_sync_to_async`` runs (asgiref's single thread executor, one for
    the whole run). channels closes that thread's connection only when it is
    obsolete; after some tests (the flood test in tests/security/test_entry.py)
    it stays open for the rest of the run, and PostgreSQL then refuses to drop
    the test database at the end ("being accessed by other users")."""
    yield
    if not request.config.pluginmanager.hasplugin("django"):
        return
    from asgiref.sync import SyncToAsync
    from django.db import connections

    # Queued behind whatever a consumer left running there, so it runs after it.
    SyncToAsync.single_thread_executor.submit(connections.close_all).result(timeout=60)


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def pytest_collection_modifyitems(config, items):
    """Run the browser tests last, and skip them when chromium is missing,
    unless it is required.

    Last: their session-wide Playwright (sync API) leaves its event loop
    marked as running in the main thread, and pytest-asyncio then refuses to
    start an async test after them ("Runner.run() cannot be called from a
    running event loop")."""
    wanted = [item for item in items if item.get_closest_marker("browser")]
    items[:] = [item for item in items if not item.get_closest_marker("browser")] + wanted
    if not wanted or Path(CHROMIUM).exists():
        return
    if os.getenv("NARRATOR_REQUIRE_BROWSER") == "1":
        raise pytest.UsageError(
            f"NARRATOR_REQUIRE_BROWSER=1 but {CHROMIUM} is missing: install Debian's chromium."
        )
    skip = pytest.mark.skip(reason=f"{CHROMIUM} is missing (apt-get install chromium)")
    for item in wanted:
        item.add_marker(skip)


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium, headless, shared by every browser test."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()
