"""Fixtures for tests that start real ASGI worker processes.

Tests marked ``postgres`` skip unless the default database is PostgreSQL
(``DATABASE_URL``); tests marked ``redis`` skip unless ``REDIS_URL`` is set
(see ``tests/conftest.py``). Workers share the pytest test database, so the
tests use ``django_db(transaction=True)``: what the test writes is committed
and visible to them.
"""

from __future__ import annotations

import uuid

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.test import Client

from tests.workers.procs import Worker, worker_env


@pytest.fixture(autouse=True)
def _postgres_only(request):
    if request.node.get_closest_marker("postgres") and (
        settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql"
    ):
        pytest.skip("needs PostgreSQL: set DATABASE_URL=postgres://…")


@pytest.fixture
def start_workers(request, tmp_path):
    """``start_workers(n)`` → n ready Daphne workers (started side by side);
    every worker started is terminated at teardown, killed ones included."""
    prefix = f"test-workers-{uuid.uuid4().hex[:8]}"
    started: list[Worker] = []

    def start(count: int = 2) -> list[Worker]:
        batch = [
            Worker(f"worker{len(started) + i + 1}", worker_env(prefix), tmp_path)
            for i in range(count)
        ]
        started.extend(batch)
        for worker in batch:
            worker.spawn()  # each on its own bound socket: no two share a port
        for worker in batch:
            worker.wait_ready()
        for worker in batch:
            print(f"{worker.name} on port {worker.port} ready in {worker.started_in:.2f}s")
        return batch

    yield start
    for worker in started:
        worker.stop()


@database_sync_to_async
def session_cookie(user) -> str:
    """A Django session (stored in the shared database) logged in as ``user``."""
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


@pytest.fixture
def game(transactional_db):
    """The seeds' evening (Helen, Grady, a narrator, an open session), committed."""
    from tests.factories import evening

    return evening()


def strong_pairs(pairs: int, strong: int) -> dict:
    """A chronicle with a narrator, an open session and ``pairs`` pairs of
    characters (challenger, defender), each with ``strong`` copies of the
    Physical Trait "Strong" (``tests.factories.paired_chronicle``). Returns
    ``{"narrator", "session", "pairs": [((challenger, her player), (defender,
    his player)), ...]}``."""
    from tests.factories import paired_chronicle

    built = paired_chronicle(
        pairs,
        copies=strong,
        names=("Challenger", "Defender"),
        traits=("Strong", "Strong"),
        chronicle_name="Busy Chronicle",
    )
    made = [tuple((character, character.player) for character in pair) for pair in built["pairs"]]
    return {"narrator": built["narrator"], "session": built["session"], "pairs": made}
