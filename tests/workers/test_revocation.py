"""Join links revoked by another process (``manage.py shell`` calling
``characters.services.join_links_revoke``, as ``manage.py`` and the admin do):
the phone's next reconnect is refused on every worker, not only on the one it
was connected to, because each worker reads the Django session again on every
connect (``narrator.wsauth``)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.challenges.wsutil import join_cookie
from tests.workers.procs import ROOT, worker_env

pytestmark = [
    pytest.mark.workers,
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.django_db(transaction=True),
    pytest.mark.asyncio,
]

REVOKE = (
    "from django.contrib.auth import get_user_model\n"
    "from characters.services import join_links_revoke\n"
    "print(join_links_revoke(user=get_user_model().objects.get(username='helen')))\n"
)


async def _first(worker, path: str, cookie: str) -> str:
    """The first frame of a socket on ``worker``: the view, or "closed:CODE"."""
    async with connect(
        worker.ws_base + path,
        origin=worker.base,
        additional_headers={"Cookie": f"sessionid={cookie}"},
        open_timeout=10,
        ping_interval=None,
        max_size=2**22,
    ) as ws:
        try:
            return await ws.recv()
        except ConnectionClosed:  # the close code is the answer
            return f"closed:{ws.close_code}"


async def test_a_revocation_from_another_process_refuses_reconnects_everywhere(game, start_workers):
    a, b = start_workers(2)
    path = f"/ws/play/{game['helen'].pk}/"
    cookie = await join_cookie(game["helen_player"])
    for worker in (a, b):
        assert 'id="live"' in await _first(worker, path, cookie)
    revoked = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", REVOKE],
        cwd=ROOT,
        env=worker_env("test-revocation"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert revoked.returncode == 0, revoked.stderr
    assert revoked.stdout.split()[-1] == "1"  # her one browser logged out
    for worker in (a, b):
        assert await _first(worker, path, cookie) == "closed:4401"
