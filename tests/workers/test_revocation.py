"""Rights ended in another process or on another worker reach every worker.

Join links revoked by another process (``manage.py shell`` calling
``characters.services.join_links_revoke``, as ``manage.py`` and the admin do):
the phone's next reconnect is refused on every worker, not only on the one it
was connected to, because each worker reads the Django session again on every
connect (``narrator.wsauth``)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

import pytest
from websockets.exceptions import ConnectionClosed

from tests.challenges.wsutil import join_cookie
from tests.workers.conftest import session_cookie
from tests.workers.phone import socket_to
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
    async with socket_to(worker, path, cookie) as ws:
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


class _Held:
    """A socket held open on a worker: its first frame read, then every frame
    until it closes (:meth:`close_code`)."""

    def __init__(self, worker, path: str, cookie: str):
        self.worker, self.path, self.cookie = worker, path, cookie

    async def open(self) -> _Held:
        self.ws = await socket_to(self.worker, self.path, self.cookie)
        assert (await asyncio.wait_for(self.ws.recv(), 30)).startswith("<!--v:")
        return self

    async def close_code(self, within: float = 30.0) -> int | None:
        """The code it was closed with (frames before it are skipped), or
        None if still open after ``within`` seconds."""

        async def drain() -> int | None:
            try:
                while True:
                    await self.ws.recv()
            except ConnectionClosed:
                return self.ws.close_code

        try:
            return await asyncio.wait_for(drain(), within)
        except TimeoutError:
            return None
        finally:
            await self.ws.close()


def _logout_through(worker, cookie: str) -> int:
    """POST /accounts/logout/ on ``worker`` as the browser holding ``cookie``
    (with a CSRF token, as the page's form sends it). Returns the status."""
    token = "k" * 32
    request = urllib.request.Request(
        worker.base + "/accounts/logout/",
        data=urllib.parse.urlencode({"csrfmiddlewaretoken": token}).encode(),
        headers={"Cookie": f"sessionid={cookie}; csrftoken={token}", "Referer": worker.base + "/"},
        method="POST",
    )

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    try:
        with urllib.request.build_opener(NoRedirect).open(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as answer:  # the redirect after logout
        return answer.code


async def test_a_logout_on_one_worker_closes_her_sockets_on_every_worker(game, start_workers):
    a, b = start_workers(2)
    browser = await session_cookie(game["helen_player"])
    other_login = await session_cookie(game["helen_player"])
    path = f"/ws/play/{game['helen'].pk}/"
    held = [await _Held(w, path, browser).open() for w in (a, b)]
    kept = [await _Held(w, path, other_login).open() for w in (a, b)]

    status = await asyncio.to_thread(_logout_through, a, browser)
    assert status in (200, 302), status

    assert [await socket.close_code() for socket in held] == [4401, 4401]
    assert [await socket.close_code(within=1) for socket in kept] == [None, None]


async def _in_another_process(worker, code: str) -> None:
    """Run ``code`` in ``manage.py shell`` (the admin or a shell elsewhere),
    with ``worker``'s environment: its Redis prefix, so its events reach them."""
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=worker.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


CHANGES = {
    "password": (
        "u = get_user_model().objects.get(username='helen'); u.set_password('x-new'); u.save()",
        4401,
    ),
    "deactivated": (
        "u = get_user_model().objects.get(username='helen'); u.is_active = False; u.save()",
        4401,
    ),
    "character given away": (
        "from characters.models import Character\n"
        "c = Character.objects.get(name='Helen'); "
        "c.player = get_user_model().objects.get(username='grady'); c.save()",
        4410,
    ),
}


@pytest.mark.parametrize("change", CHANGES)
async def test_an_admins_change_in_another_process_closes_her_sockets_on_every_worker(
    game, start_workers, change
):
    """The admin (or a shell) in a third process changes her rights: her
    sockets on both workers close with the code a new socket would get."""
    a, b = start_workers(2)
    cookie = await session_cookie(game["helen_player"])
    path = f"/ws/play/{game['helen'].pk}/"
    held = [await _Held(w, path, cookie).open() for w in (a, b)]
    grady = await _Held(
        b, f"/ws/play/{game['grady'].pk}/", await session_cookie(game["grady_player"])
    ).open()
    code, expected = CHANGES[change]
    await _in_another_process(a, "from django.contrib.auth import get_user_model\n" + code)
    assert [await socket.close_code() for socket in held] == [expected, expected]
    assert await grady.close_code(within=1) is None


async def test_a_narrator_removed_in_another_process_loses_her_dashboards_everywhere(
    game, start_workers
):
    a, b = start_workers(2)
    cookie = await session_cookie(game["narrator"])
    path = f"/ws/narrate/{game['session'].pk}/"
    held = [await _Held(w, path, cookie).open() for w in (a, b)]
    await _in_another_process(
        a,
        "from characters.models import Chronicle\n"
        f"Chronicle.objects.get(pk={game['chronicle'].pk}).narrators.clear()",
    )
    assert [await socket.close_code() for socket in held] == [4410, 4410]
