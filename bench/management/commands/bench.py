"""``manage.py bench``: load Narrator with simulated phones and dashboards on
loopback and print a table of round trips, losses and server cost.

It never opens your database: it creates its own (a SQLite file in a temporary
directory, or a ``narrator_bench_*`` PostgreSQL database that it drops), its
own Redis (``redis-server`` on ``--redis-port``) and workers (Uvicorn, as
``deploy/serve`` runs them; or ``--server daphne|granian``) on ``--port-base``
and the ports after it. See docs/performance.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from bench import SCENARIOS
from bench.servers import SERVERS


def _csv(kind):
    def parse(value: str):
        return tuple(kind(v.strip()) for v in value.split(",") if v.strip())

    return parse


class Command(BaseCommand):
    help = "Benchmark Narrator against a bare Channels consumer (loopback only)."

    def add_arguments(self, parser):
        parser.add_argument("--phones", type=int, default=1500, help="phones (even; default 1500)")
        parser.add_argument("--dashboards", type=int, default=12, help="narrator dashboards")
        parser.add_argument(
            "--rate",
            type=float,
            default=20.0,
            help="challenges/second of the paced and evening rows",
        )
        parser.add_argument(
            "--duration",
            type=float,
            default=15.0,
            help="seconds of the paced, saturation and evening rows",
        )
        parser.add_argument(
            "--saturation-pairs", type=int, default=100, help="pairs playing back to back"
        )
        parser.add_argument(
            "--scenarios",
            type=_csv(str),
            default=SCENARIOS,
            help=",".join(SCENARIOS) + " (evening: met_classic with mob scenes; evening_bns, "
            "evening_storytelling: a chronicle of that ruleset each, its phones connected for "
            "the row)",
        )
        parser.add_argument("--layer", type=_csv(str), default=("memory", "redis"))
        parser.add_argument("--workers", type=_csv(int), default=(1, 2))
        parser.add_argument(
            "--database",
            default="auto",
            choices=["auto", "sqlite", "postgres"],
            help="auto: SQLite with 1 worker, PostgreSQL with 2",
        )
        parser.add_argument(
            "--postgres-url",
            default="postgres://postgres@127.0.0.1:5432/postgres",
            help="server where narrator_bench_* databases are created and dropped",
        )
        parser.add_argument(
            "--wait",
            type=float,
            default=120.0,
            help="seconds an ack, view or result may take before it counts as lost (late "
            "ones are measured)",
        )
        parser.add_argument(
            "--idle-cap",
            type=float,
            default=120.0,
            help="before each row, wait at most this many seconds for the workers to be idle",
        )
        parser.add_argument("--redis-port", type=int, default=6393)
        parser.add_argument("--port-base", type=int, default=8500)
        parser.add_argument(
            "--server",
            default="uvicorn",
            choices=SERVERS,
            help="ASGI server of every worker (uvicorn: the deployment's, deploy/serve)",
        )
        parser.add_argument("--no-bare", action="store_true", help="skip the bare baseline")
        parser.add_argument(
            "--no-heartbeat",
            action="store_true",
            help="sockets do not ping (app.js pings every HEARTBEAT_MS) outside the heartbeat row",
        )
        parser.add_argument(
            "--heartbeat-duration",
            type=float,
            default=30.0,
            help="seconds the heartbeat scenario only pings",
        )
        parser.add_argument(
            "--quick",
            action="store_true",
            help="a smoke run: 40 phones, 2 dashboards, 5 challenges/s for 3 s, in-memory layer, "
            "heartbeat row 10 s",
        )
        parser.add_argument(
            "--repeat",
            type=int,
            default=1,
            help="run each scenario N times, Narrator and bare interleaved; print the median run "
            "(issue 14's goals are medians of three runs)",
        )
        parser.add_argument("--output", help="also write the table to this file")
        parser.add_argument(
            "--profile", help="a folder: run Narrator's workers under cProfile, stats saved there"
        )

    def handle(self, *args, **opts):
        try:
            from bench.report import table
            from bench.run import Options, run
        except ImportError as error:  # websockets is a development requirement
            raise CommandError(f"{error}: pip install -r requirements-dev.txt") from None
        options = Options(
            phones=opts["phones"],
            dashboards=opts["dashboards"],
            rate=opts["rate"],
            duration=opts["duration"],
            saturation_pairs=opts["saturation_pairs"],
            scenarios=opts["scenarios"],
            layers=opts["layer"],
            workers=opts["workers"],
            database=opts["database"],
            postgres_url=opts["postgres_url"],
            redis_port=opts["redis_port"],
            port_base=opts["port_base"],
            server=opts["server"],
            wait=opts["wait"],
            idle_cap=opts["idle_cap"],
            bare=not opts["no_bare"],
            heartbeat=not opts["no_heartbeat"],
            heartbeat_duration=opts["heartbeat_duration"],
            repeat=opts["repeat"],
            profile=Path(opts["profile"]).resolve() if opts["profile"] else None,
            log=lambda line: print(line, file=sys.stderr, flush=True),
        )
        if opts["quick"]:
            options.phones, options.dashboards = 40, 2
            options.rate, options.duration, options.saturation_pairs = 5.0, 3.0, 10
            options.layers, options.workers = ("memory",), (1,)
            options.heartbeat_duration = min(options.heartbeat_duration, 10.0)
        if options.phones < 2 or options.phones % 2 or options.dashboards < 1:
            raise CommandError("--phones must be even and at least 2; --dashboards at least 1.")
        if options.repeat < 1:
            raise CommandError("--repeat must be at least 1.")
        if options.wait <= 0 or options.idle_cap < 0 or options.heartbeat_duration <= 0:
            raise CommandError(
                "--wait and --heartbeat-duration must be positive and --idle-cap not negative."
            )
        if unknown := set(options.scenarios) - set(SCENARIOS):
            raise CommandError(f"Unknown scenarios: {', '.join(sorted(unknown))}.")
        if unknown := set(options.layers) - {"memory", "redis"}:
            raise CommandError(f"Unknown layers: {', '.join(sorted(unknown))}.")
        if unknown := set(options.workers) - {1, 2}:
            raise CommandError("--workers takes 1, 2 or 1,2.")
        if options.profile and options.server == "granian":
            raise CommandError("--profile needs --server daphne or uvicorn (Granian forks).")
        if options.profile:
            options.profile.mkdir(parents=True, exist_ok=True)  # cProfile writes no folder
        try:
            options.configs()
        except ValueError as error:
            raise CommandError(str(error)) from None
        results = run(options)
        text = table(results) + "\n\n" + "\n".join(f"- {line}" for line in options.checks)
        self.stdout.write(text)
        if opts["output"]:
            with open(opts["output"], "w") as fh:
                fh.write(text + "\n")
        if options.failed:
            raise CommandError(
                "The bench's database is not consistent:\n" + "\n".join(options.failed)
            )
