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

from tests.workers.procs import Worker, free_port, worker_env


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
        taken: set[int] = set()
        for worker in batch:
            worker.spawn(free_port(frozenset(taken)))
            taken.add(worker.port)
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
    Physical Trait "Strong". Returns ``{"narrator", "session", "pairs":
    [((challenger, her player), (defender, his player)), ...]}``."""
    from characters.models import Chronicle, GameSession
    from tests.factories import make_character, make_user

    narrator = make_user("narrator")
    chronicle = Chronicle.objects.create(name="Busy Chronicle")
    chronicle.narrators.add(narrator)
    session = GameSession.objects.create(chronicle=chronicle, name="Tonight")
    made = []
    for n in range(pairs):
        pair = []
        for role in ("challenger", "defender"):
            player = make_user(f"{role}{n}")
            character = make_character(
                chronicle, f"{role.title()} {n}", player, traits=[("Strong", "physical", strong)]
            )
            pair.append((character, player))
        made.append(tuple(pair))
    return {"narrator": narrator, "session": session, "pairs": made}
