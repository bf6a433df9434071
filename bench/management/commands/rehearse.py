"""``manage.py rehearse``: a crowded evening a narrator can watch on her tablet.

Loads the chronicle "Rehearsal" (``--characters`` of ``--ruleset``, an open
session), writes ``--challenges`` of history at once, prints the narrator's
and the admin's one-tap join links, then plays it with simulated phones
speaking the real websocket frames at ``--rate`` starts a minute until
Ctrl-C (or ``--duration`` seconds), and prints what was played.

By default it serves Narrator itself as ``make run`` does (Daphne, on
``--host``/``--port``) and plays over loopback; with ``--url`` it plays
against a server already running on this database (``deploy/serve``'s).
Unlike ``manage.py bench`` it uses your database: run it on a copy, never on
a real chronicle's (it replaces only the chronicle "Rehearsal").
"""

from __future__ import annotations

import asyncio
import math
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from challenges.rules import RULESETS
from characters.management.commands.evening import (
    ASGI_APP,
    UNSPECIFIED_HOSTS,
    daphne_options,
    join_link,
    lan_address,
)

SERVER_START = 30.0  # seconds the server may take to answer /healthz
SERVER_STOP = 10.0  # seconds it may take to stop before it is killed


class Command(BaseCommand):
    help = (
        "Load a crowded chronicle 'Rehearsal' and play it live with simulated phones over "
        "real websockets, so a narrator can watch a real evening on the dashboard."
    )

    def add_arguments(self, parser):
        parser.add_argument("--characters", type=int, default=150, help="characters (≥ 2)")
        parser.add_argument(
            "--ruleset", default="met_classic", choices=sorted(RULESETS), help="its ruleset"
        )
        parser.add_argument(
            "--rate", type=float, default=20.0, help="challenges started a minute (default 20)"
        )
        parser.add_argument(
            "--challenges",
            type=int,
            default=0,
            help="first write this many resolved challenges of history, at once",
        )
        parser.add_argument(
            "--duration", type=float, help="seconds to play (default: until Ctrl-C)"
        )
        parser.add_argument("--host", default="0.0.0.0", help="address to serve on")
        parser.add_argument("--port", type=int, default=8000, help="port to serve on")
        parser.add_argument(
            "--url",
            help="play against this running server (http://host:port) instead of starting one",
        )

    def handle(self, *args, **opts):
        try:
            from bench import rehearsal
        except ImportError as error:  # websockets is a development requirement
            raise CommandError(f"{error}: pip install -r requirements-dev.txt") from None
        characters, rate, duration = opts["characters"], opts["rate"], opts["duration"]
        if characters < 2:
            raise CommandError("A rehearsal needs at least 2 characters.")
        if not rate > 0:
            raise CommandError("--rate must be a positive number of challenges a minute.")
        if opts["challenges"] < 0:
            raise CommandError("--challenges must be 0 or more.")
        if duration is not None and not duration > 0:
            raise CommandError("--duration must be a positive number of seconds.")
        url = opts["url"]
        if url is not None and urlsplit(url).scheme not in ("http", "https"):
            raise CommandError("--url must look like http://host:port")

        try:
            self._rehearse(rehearsal, opts)
        except KeyboardInterrupt:  # Ctrl-C before the phones play: nothing to summarise
            raise CommandError("Stopped before the evening was played.") from None

    def _rehearse(self, rehearsal, opts) -> None:
        """Load, fill, serve, play and summarise (``handle`` checked ``opts``)."""
        characters, rate, duration, url = (
            opts["characters"],
            opts["rate"],
            opts["duration"],
            opts["url"],
        )
        quiet = max(opts["verbosity"] - 1, 0)
        call_command("migrate", interactive=False, verbosity=quiet)
        try:
            made = rehearsal.create(opts["ruleset"], characters)
        except ValueError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"Chronicle {rehearsal.CHRONICLE!r} ({opts['ruleset']}): {characters} characters "
            "present tonight."
        )
        if opts["challenges"]:
            started = time.perf_counter()
            filled = rehearsal.fill(made, opts["challenges"])
            self.stdout.write(
                f"History: {_counts(filled)} in {time.perf_counter() - started:.1f} s."
            )

        server = None
        try:
            if url is None:
                call_command("collectstatic", interactive=False, verbosity=quiet)
                server = _start_server(opts["host"], opts["port"])
                public = lan_address() if opts["host"] in UNSPECIFIED_HOSTS else opts["host"]
                base = f"http://{public}:{opts['port']}"
                loopback = f"http://127.0.0.1:{opts['port']}"
            else:
                base = loopback = url.rstrip("/")
            self._links(base, made.session)
            until = "Ctrl-C" if duration is None else f"{duration:g} s"
            self.stdout.write(f"Playing {rate:g} challenges a minute until {until}.")
            self.stdout.flush()
            started = time.perf_counter()
            result, counts = asyncio.run(
                _run(loopback, made, rate, math.inf if duration is None else duration, self)
            )
        finally:
            if server is not None:
                _stop_server(server)
        played = time.perf_counter() - started
        tally = rehearsal.tally(made.session)
        self.stdout.write("")
        self.stdout.write(self.style.SUCCESS(f"Rehearsal over after {played:.0f} s."))
        self.stdout.write(
            f"Played through the phones: {result.count} results seen, {result.lost} lost"
            + (f"; {_counts(counts)}" if counts else "")
            + "."
        )
        self.stdout.write(
            f"Tonight's session: {tally['challenges']} challenges ({tally['resolved']} resolved, "
            f"{tally['calls']} calling a narrator), {tally['rolled']} of {tally['rolls']} dice "
            f"rolls rolled, {tally['events']} events."
        )

    def _links(self, base: str, session_id: int) -> None:
        """Print the one-tap join links of the watchers, each landing where it helps."""
        from bench.rehearsal import WATCHERS

        users = get_user_model().objects.in_bulk(
            [name for name, _ in WATCHERS], field_name="username"
        )
        dashboard = reverse("narrate", args=[session_id])
        self.stdout.write("")
        self.stdout.write(self.style.SUCCESS(f"Narrators' dashboard: {base}{dashboard}"))
        for (name, _), landing in zip(WATCHERS, (dashboard, reverse("admin:index")), strict=True):
            link = join_link(users[name], base) + f"&next={landing}"
            self.stdout.write(self.style.MIGRATE_HEADING(f"Join as {name}: {link}"))
        self.stdout.write("")


async def _run(base: str, made, rate: float, duration: float, command: Command):
    """Play until ``duration`` ends or SIGINT/SIGTERM (Ctrl-C) sets the stop:
    the starts stop, what is in flight is cancelled, the sockets close."""
    from bench import rehearsal

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:

        def log(line: str) -> None:
            command.stdout.write(line)
            command.stdout.flush()

        playing = asyncio.ensure_future(
            rehearsal.play(base, made, rate=rate, duration=duration, stop=stop, log=log)
        )
        stopped = asyncio.ensure_future(stop.wait())
        await asyncio.wait([playing, stopped], return_when=asyncio.FIRST_COMPLETED)
        if not playing.done():
            # Stopped while connecting, or the in-flight challenges ignore it:
            # a grace, then cancel (its ``finally`` closes the sockets).
            done, _ = await asyncio.wait([playing], timeout=5)
            if not done:
                playing.cancel()
        stopped.cancel()
        try:
            return await playing
        except asyncio.CancelledError:
            from bench.report import Result

            return Result("rehearsal", base, "narrator"), {}
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)


def _counts(counts) -> str:
    """``{"resolved": 3, "narrator called": 1}`` → ``"3 resolved, 1 narrator called"``."""
    return ", ".join(f"{n} {what}" for what, n in counts.most_common() if n)


def _start_server(host: str, port: int) -> subprocess.Popen:
    """Serve Narrator with Daphne as ``make run`` does, in a child process of
    its own session (so Ctrl-C reaches only this command, which stops it
    after closing its sockets); wait until it answers. CommandError if the
    port is taken or it does not answer within :data:`SERVER_START` s."""
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            raise CommandError(
                f"Something already serves port {port}: stop it, pick another --port, or "
                f"play against it with --url http://127.0.0.1:{port}"
            )
    log = open(settings.DATA_DIR / "rehearse-server.log", "w")  # noqa: SIM115 - the child's
    server = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", host, "-p", str(port), *daphne_options(), ASGI_APP],
        cwd=settings.BASE_DIR,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    log.close()
    deadline = time.monotonic() + SERVER_START
    up = False
    try:
        while not up and time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                    up = True
            except OSError:
                time.sleep(0.2)
    finally:
        if not up:  # it failed, or Ctrl-C came while it started: never left running
            _stop_server(server)
    if up:
        return server
    tail = (settings.DATA_DIR / "rehearse-server.log").read_text()[-2000:]
    raise CommandError(f"The server did not start on port {port}:\n{tail}")


def _stop_server(server: subprocess.Popen) -> None:
    """Stop the child server (SIGTERM: a shell that starts this command in
    the background leaves SIGINT ignored in its children), killed after
    :data:`SERVER_STOP` s."""
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(SERVER_STOP)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
