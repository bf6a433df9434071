"""The bench run: for each configuration, start Narrator and the bare baseline
side by side, open their sockets, play each scenario on one then the other,
and collect :class:`~bench.report.Result` rows."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import resource
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench import SCENARIOS, load
from bench.fixtures import EVENING_CATEGORIES, evening_sheet, other_sheet
from bench.report import (
    CHALLENGE_ROWS,
    CROWDED,
    EVENINGS,
    Result,
    against_in_memory,
    compare_time_out,
    crowded_lines,
    heartbeat_shares,
    median_run,
    percentile,
)
from bench.servers import (
    Database,
    Redis,
    Workers,
    collect_static,
    make_workdir,
    run_fixtures,
    worker_env,
)

BARE_PORT_OFFSET = 10
IDLE_CPU = 0.03  # CPU seconds per second: a worker below this in every process is idle
DASHBOARD_TIMED = ("paced", "saturation", "burst", *EVENINGS)  # rows whose results dashboards show
# The evening rows of the other rulesets: each plays a chronicle of its own
# (``bench.fixtures`` ``chronicle``), its phones connected for the row only.
OTHER_EVENINGS = {"evening_bns": "bns", "evening_storytelling": "storytelling"}
# Every row played in a chronicle of its own, made once before it: the other
# evenings', and issue 30's crowd (``bench.fixtures`` ``crowd``), its 150
# phones and the first CROWD_DASHBOARDS dashboards connected for the row only.
OWN_CHRONICLES = {**OTHER_EVENINGS, "crowded_dashboard": "crowd"}
CROWD_DASHBOARDS = 2
IDLE_SAMPLE = 0.5  # seconds between two CPU readings of the idle wait


@dataclass(frozen=True)
class Config:
    """One column of the matrix: channel layer, worker count, database kind."""

    layer: str  # "memory" | "redis"
    workers: int
    database: str  # "sqlite" | "postgres"

    @property
    def label(self) -> str:
        return f"{self.layer}/{self.workers}w/{self.database}"


@dataclass
class Options:
    """What to run; the management command fills it from its arguments."""

    phones: int = 1500
    dashboards: int = 12
    rate: float = 20.0  # challenges started per second (paced)
    duration: float = 15.0  # seconds of the paced and saturation scenarios
    saturation_pairs: int = 100
    scenarios: tuple[str, ...] = SCENARIOS
    layers: tuple[str, ...] = ("memory", "redis")
    workers: tuple[int, ...] = (1, 2)
    database: str = "auto"  # "auto" | "sqlite" | "postgres"
    postgres_url: str = "postgres://postgres@127.0.0.1:5432/postgres"
    redis_port: int = 6393
    port_base: int = 8500
    server: str = "uvicorn"  # ASGI server of every worker: bench.servers.SERVERS
    bare: bool = True
    heartbeat: bool = True  # every socket pings as app.js does, in every scenario
    heartbeat_duration: float = 30.0  # seconds of the heartbeat scenario
    repeat: int = 1  # runs of each scenario, Narrator and bare interleaved; the median printed
    connect_concurrency: int = 100
    wait: float = load.WAIT  # seconds before an expected frame counts as lost
    idle_cap: float = 120.0  # seconds the workers may take to become idle between rows
    profile: Path | None = None  # a folder: Narrator's workers run under cProfile
    log: Callable[[str], None] = print
    checks: list[str] = field(default_factory=list)  # database checks, one line each
    failed: list[str] = field(default_factory=list)  # checks that fail the bench, one line each

    def configs(self) -> list[Config]:
        """Every valid combination: the in-memory layer only with one worker."""
        out = []
        for layer in self.layers:
            for workers in self.workers:
                if layer == "memory" and workers > 1:
                    continue
                database = self.database
                if database == "auto":
                    database = "sqlite" if workers == 1 else "postgres"
                out.append(Config(layer, workers, database))
        if not out:
            raise ValueError("No configuration to run: the in-memory layer needs --workers 1.")
        return out


def raise_fd_limit(need: int) -> None:
    """Raise the soft limit of open files to ``need`` (at most the hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = need if hard == resource.RLIM_INFINITY else min(need, hard)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    if want < need:
        raise RuntimeError(f"the open-files limit ({hard}) is below the {need} sockets needed")


def run(options: Options) -> list[Result]:
    """Run every configuration; returns all rows. Cleans up what it started."""
    configs = options.configs()
    load.set_wait(options.wait)
    raise_fd_limit(3 * (options.phones + options.dashboards) + 512)
    workdir = make_workdir()
    redis = None
    results: list[Result] = []
    try:
        if any(c.layer == "redis" for c in configs):
            redis = Redis(options.redis_port, workdir)
        for config in configs:
            options.log(f"== {config.label} under {options.server}")
            try:
                asyncio.run(run_config(config, options, workdir, redis, results))
            except Exception as error:  # noqa: BLE001 - reported; the other configurations run
                options.log(f"!! {config.label} stopped: {error!r}")
                options.checks.append(f"{config.label}: stopped by {error!r}")
        options.checks.extend(against_in_memory(results))
    finally:
        if redis is not None:
            redis.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return results


async def run_config(
    config: Config, options: Options, workdir: Path, redis, results: list[Result]
) -> None:
    """Run every scenario of one configuration, appending rows to ``results``."""
    database = Database(config.database, workdir, options.postgres_url)
    real = bare = None
    try:
        env = worker_env(database.url, redis.url if config.layer == "redis" else None, workdir)
        if redis is not None:
            import redis as redis_py

            redis_py.Redis.from_url(redis.url).flushall()  # our private server only
        data_file = workdir / "bench.json"
        run_fixtures(env, "prepare", str(options.phones), str(options.dashboards), str(data_file))
        if any(scenario in OTHER_EVENINGS for scenario in options.scenarios):
            collect_static(env, workdir)  # their phones load their page (the start form)
        data = json.loads(data_file.read_text())
        ports = [options.port_base + i for i in range(config.workers)]
        beats = load.Heartbeats(load.HEARTBEAT if options.heartbeat else 0.0)
        real = Workers(
            "narrator.asgi:application", ports, env, workdir, options.profile, options.server
        )
        real.start()
        targets = [(_narrator(data, ports, beats), real)]
        if options.bare:
            bare_ports = [p + BARE_PORT_OFFSET for p in ports]
            bare = Workers(
                "bench.bare:application", bare_ports, env, workdir, server=options.server
            )
            bare.start()
            targets.append((_bare(options, bare_ports, beats), bare))
        everyone = [w for _, w in targets]
        conns = [c for t, _ in targets for c in (*t.phones, *t.dashboards)]
        first = True
        for target, workers in targets:
            waited = "" if first else await wait_idle(everyone, conns, options.idle_cap, beats)
            first = False
            results.append(await _connect(config, target, workers, options, waited))
        every_run: list[Result] = []  # with --repeat, the runs not printed too
        evening_ready = False
        chronicles: dict[str, dict] = {}  # the other rulesets' chronicles, made once
        # The evening last: it adds Traits, wounds characters and spends Traits.
        for scenario in sorted(options.scenarios, key=lambda name: name == "evening"):
            runs: dict[str, list[list[Result]]] = {t.name: [] for t, _ in targets}
            for i in range(options.repeat):
                # Interleaved: Narrator first, then bare; the next round the other way.
                for target, workers in targets if i % 2 == 0 else targets[::-1]:
                    if target.name == "bare" and scenario in NARRATOR_ONLY:
                        continue
                    if scenario == "evening" and not evening_ready:
                        options.log(f"   evening sheets: {run_fixtures(env, 'evening').strip()}")
                        evening_ready = True
                    played, connected = target, ""
                    if scenario in OWN_CHRONICLES:
                        made = OWN_CHRONICLES[scenario]
                        if made not in chronicles:
                            chronicles[made] = _chronicle(env, workdir, made, data)
                        played = _narrator(chronicles[made], ports, beats)
                        # The crowd's phones play from their sockets alone: no page.
                        connected = await _connect_for_row(played, options, pages=made != "crowd")
                    row_conns = [*conns, *played.phones, *played.dashboards]
                    waited = await wait_idle(everyone, row_conns, options.idle_cap, beats)
                    waited = ", ".join(filter(None, [waited, connected]))
                    options.log(f"   {scenario} on {target.name} ({waited})")
                    settle = functools.partial(
                        wait_idle, everyone, row_conns, options.idle_cap, beats
                    )
                    try:
                        rows = await _scenario(
                            scenario, config, played, workers, options, waited, settle, beats
                        )
                    finally:
                        if played is not target:
                            await asyncio.gather(
                                *(c.close() for c in [*played.phones, *played.dashboards])
                            )
                    runs[target.name].append(rows)
                    every_run.extend(rows)
            for target, _ in targets:
                if runs[target.name]:
                    results.extend(median_run(runs[target.name]))
        for target, workers in targets:
            await asyncio.gather(*(c.close() for c in [*target.phones, *target.dashboards]))
            if not workers.alive():
                options.log(f"!! {target.name} worker died:\n{workers.log_tail()}")
        check = json.loads(run_fixtures(env, "verify"))
        done = sum(
            r.count for r in every_run if r.app == "narrator" and r.scenario in CHALLENGE_ROWS
        )
        options.checks.append(
            f"{config.label}: {check['challenges']} challenges in the database, "
            f"{check['resolved']} resolved ({check['voided']} voided by a narrator), "
            f"{check['losses']} Traits lost, "
            f"{check['doubled_losses']} challenges with a doubled loss, "
            f"{check['overspent']} evening challenges or Traits with more lost than bid or held; "
            f"{check['mob_scenes']} mob scenes ({check['mob_settled']} settled), "
            f"{check['rolls']} dice rolls ({check['rolled']} rolled), "
            f"{check['doubled_results']} results or rolls doubled, "
            f"{check['willpower_overspent']} characters with more Willpower spent than held; "
            f"{done} results seen on the phones"
        )
        options.checks.append(checkstate_line(config.label, check["inconsistencies"]))
        if check["inconsistencies"]:
            options.failed.append(options.checks[-1])
        mine = [r for r in results if r.config == config.label]
        compare_time_out(mine)
        options.checks.extend(heartbeat_shares(mine))
        options.checks.extend(crowded_lines(mine))
    finally:
        for workers in (real, bare):
            if workers is not None:
                workers.stop()
        database.drop()


NARRATOR_ONLY = (*EVENINGS, *CROWDED)  # the bare app has nothing like them: no bare row
SHOWN_INCONSISTENCIES = 5  # of checkstate's lines, on the bench's line


def checkstate_line(label: str, problems: list[str]) -> str:
    """The verdict of ``manage.py checkstate``'s check on one configuration's
    database after its rows: "<label>: checkstate: consistent", or how many
    inconsistencies and the first :data:`SHOWN_INCONSISTENCIES` of them."""
    if not problems:
        return f"{label}: checkstate: consistent"
    shown = "; ".join(problems[:SHOWN_INCONSISTENCIES])
    more = len(problems) - SHOWN_INCONSISTENCIES
    return f"{label}: checkstate: {len(problems)} inconsistencies: {shown}" + (
        f"; and {more} more" if more > 0 else ""
    )


def _chronicle(env: dict[str, str], workdir: Path, ruleset: str, data: dict) -> dict:
    """The bench chronicle of ``ruleset`` (``bench.fixtures`` ``chronicle``),
    shaped like ``prepare``'s data: ``{"session", "phones": [[character id,
    cookie], ...], "dashboards": [cookie, ...]}`` (the same players and
    narrators, so the same cookies, as ``data``'s). ``"crowd"``: issue 30's
    crowd (``bench.fixtures`` ``crowd``), its players its own, watched by
    the first :data:`CROWD_DASHBOARDS` of ``data``'s narrators."""
    out = workdir / f"bench-{ruleset}.json"
    if ruleset == "crowd":
        run_fixtures(env, "crowd", str(out))
        return {**json.loads(out.read_text()), "dashboards": data["dashboards"][:CROWD_DASHBOARDS]}
    run_fixtures(env, "chronicle", ruleset, str(out))
    made = json.loads(out.read_text())
    cookies = [cookie for _, cookie in data["phones"]]
    return {
        "session": made["session"],
        "phones": [list(pair) for pair in zip(made["characters"], cookies, strict=True)],
        "dashboards": data["dashboards"],
    }


async def _connect_for_row(target: load.Target, options: Options, pages: bool = True) -> str:
    """Open ``target``'s phones (with ``pages``, each loads her page first,
    as a browser opening the app: ``Conn.load_page``), then its dashboards,
    for one row (not timed); returns the note: how many opened, and why the
    others did not."""
    errors: Counter = Counter()
    gate = asyncio.Semaphore(options.connect_concurrency)

    async def page(phone: load.Conn) -> None:
        async with gate:
            try:
                await phone.load_page()
            except (OSError, load.Lost) as error:
                errors[f"page: {error or type(error).__name__}"[:60]] += 1

    if pages:
        await asyncio.gather(*(page(phone) for phone in target.phones))
    times, failed = await load.open_all(
        target.phones, concurrency=options.connect_concurrency, errors=errors
    )
    _, failed_dashboards = await load.open_all(target.dashboards, concurrency=4, errors=errors)
    note = (
        f"{len(times)} of {len(target.phones)} phones and "
        f"{len(target.dashboards) - failed_dashboards} dashboards connected for the row"
    )
    if errors:
        note += " (failed: " + ", ".join(f"{n} {k}" for k, n in errors.most_common()) + ")"
    return note


def _narrator(data: dict, ports: list[int], beats: load.Heartbeats) -> load.Narrator:
    def url(i: int, path: str) -> tuple[str, str]:
        port = ports[i % len(ports)]
        return f"ws://127.0.0.1:{port}{path}", f"http://127.0.0.1:{port}"

    phones = [
        load.Conn(*url(i, f"/ws/play/{cid}/"), cookie=cookie, ident=cid, beats=beats)
        for i, (cid, cookie) in enumerate(data["phones"])
    ]
    dashboards = [
        load.Conn(*url(i, f"/ws/narrate/{data['session']}/"), cookie=cookie, beats=beats)
        for i, cookie in enumerate(data["dashboards"])
    ]
    return load.Narrator(phones, dashboards)


def _bare(options: Options, ports: list[int], beats: load.Heartbeats) -> load.Bare:
    def url(i: int, path: str) -> tuple[str, str]:
        port = ports[i % len(ports)]
        return f"ws://127.0.0.1:{port}{path}", f"http://127.0.0.1:{port}"

    phones = [
        load.Conn(*url(i, f"/ws/bare/play/{i // 2}/"), ident=i // 2, beats=beats)
        for i in range(options.phones)
    ]
    dashboards = [
        load.Conn(*url(i, "/ws/bare/narrate/"), beats=beats) for i in range(options.dashboards)
    ]
    return load.Bare(phones, dashboards)


async def wait_idle(
    workers: list[Workers],
    conns: list[load.Conn],
    cap: float,
    beats: load.Heartbeats | None = None,
) -> str:
    """Wait until no worker process of ``workers`` used more than :data:`IDLE_CPU`
    of a core over :data:`IDLE_SAMPLE` s and no socket of ``conns`` expects a
    frame, at most ``cap`` seconds; what it still expected then is forgotten.
    The heartbeats of ``beats`` pause meanwhile (their own cost is the
    heartbeat row's). Returns the note for the next row: ``waited 12 s for
    idle`` (or why not)."""
    if beats is not None:
        beats.paused = True
        try:
            return await wait_idle(workers, conns, cap)
        finally:
            beats.paused = False
    start = time.perf_counter()
    before, at = [w.cpu_each() for w in workers], time.perf_counter()
    while True:
        await asyncio.sleep(IDLE_SAMPLE)  # frames still on their way arrive meanwhile
        after, now = [w.cpu_each() for w in workers], time.perf_counter()
        busiest = max(
            (b - a) / (now - at)
            for old, new in zip(before, after, strict=True)
            for a, b in zip(old, new, strict=True)
        )
        before, at = after, now
        expected = sum(c.outstanding() for c in conns)
        waited = now - start
        if busiest < IDLE_CPU and not expected:
            return f"waited {waited:.0f} s for idle"
        if waited >= cap:
            dropped = sum(c.forget() for c in conns)
            return (
                f"NOT idle after {waited:.0f} s (a worker at {busiest * 100:.0f}% CPU, "
                f"{dropped} frames still expected)"
            )


def _client_cpu() -> float:
    t = os.times()
    return t.user + t.system


async def _connect(
    config: Config, target: load.Target, workers: Workers, options, waited: str
) -> Result:
    """Open every phone, then every dashboard; resident memory per phone."""
    result = Result("connect", config.label, target.name)
    before = workers.stat()
    start = time.perf_counter()
    errors: Counter = Counter()
    times, failed = await load.open_all(
        target.phones, concurrency=options.connect_concurrency, errors=errors
    )
    result.latencies = times
    result.lost = failed
    result.elapsed = time.perf_counter() - start
    await asyncio.sleep(1)
    after = workers.stat()
    result.cpu_seconds = after.cpu - before.cpu
    per_phone = (after.rss_kb - before.rss_kb) / max(1, len(target.phones))
    _, failed_dashboards = await load.open_all(target.dashboards, concurrency=4, errors=errors)
    result.lost += failed_dashboards
    notes = [waited] if waited else []
    notes.append(f"RSS {after.rss_kb / 1024:.0f} MB, +{per_phone:.0f} kB/phone")
    if errors:
        notes.append("failed: " + ", ".join(f"{n} {k}" for k, n in errors.most_common()))
    result.note = ", ".join(notes)
    options.log(f"   connect on {target.name}: {len(times)} phones, {result.note}")
    return result


async def _scenario(
    scenario: str,
    config: Config,
    target: load.Target,
    workers: Workers,
    options: Options,
    waited: str,
    settle,
    beats: load.Heartbeats,
) -> list[Result]:
    """Play ``scenario`` on ``target``: its row, then (paced, saturation) a row
    per step before the throws (``STEP_ROWS``)."""
    result = Result(scenario, config.label, target.name)
    for times in target.steps.values():
        times.clear()
    doubled, closed = target.counters()
    everyone = [*target.phones, *target.dashboards]
    load.take_pongs(everyone)
    mark = {"cpu": workers.stat().cpu, "client": _client_cpu(), "wall": time.perf_counter()}

    def remark() -> None:
        mark.update(cpu=workers.stat().cpu, client=_client_cpu(), wall=time.perf_counter())

    def stop() -> None:  # the row's work is done: what follows is tidying up
        mark["stop"] = workers.stat().cpu

    try:
        await _play(scenario, target, workers, options, result, remark, settle, beats, stop)
    except load.Lost as error:
        result.note = f"stopped: no answer within {load.WAIT:.0f} s ({error})"
        options.log(f"   {scenario} on {target.name}: {result.note}")
    result.cpu_seconds = mark.get("stop", workers.stat().cpu) - mark["cpu"]
    wall = time.perf_counter() - mark["wall"]
    if scenario in DASHBOARD_TIMED:
        # Issue 14: the worker's CPU until every dashboard has every result too,
        # and how long it stays busy after the last phone result.
        phones_done = time.perf_counter()
        await load.collect_dashboards(target, result)
        result.cpu_seconds_dashboards = workers.stat().cpu - mark["cpu"]
        await settle()
        result.idle_after = max(0.0, time.perf_counter() - phones_done - IDLE_SAMPLE)
    client = (_client_cpu() - mark["client"]) / wall * 100 if wall else 0
    doubled_after, closed_after = target.counters()
    result.doubled = doubled_after - doubled
    result.server_closed = closed_after - closed
    notes = [waited, *([result.note] if result.note else [])]
    # A dashboard's whole view costs far more than a phone's: counted apart.
    dashboard_views = sum(d.ping_views for d in target.dashboards)
    pongs, pings, views = load.take_pongs(everyone)
    if pings and scenario != "heartbeat":
        result.pings = pings
        notes.append(
            f"{pings} pings: to the answer p50 {percentile(pongs, 50) * 1000:.0f} ms, "
            f"p99 {percentile(pongs, 99) * 1000:.0f} ms, {views} whole views "
            f"({dashboard_views} to dashboards)"
        )
    notes.append(f"client CPU {client:.0f}%")
    if result.skipped:
        notes.append(f"{result.skipped} starts skipped (no idle pair)")
    if result.unplayable:
        notes.append(f"{result.unplayable} pairs left out (a phone never connected)")
    if result.dashboard_windowed:
        notes.append(
            f"{result.dashboard_windowed} results left a dashboard's list of the newest "
            "before their row was sent"
        )
    result.note = ", ".join(notes)
    return [result, *_step_rows(result, target)]


STEP_ROWS = ("paced", "saturation")  # rows followed by their open and bid rows
STEPS = {
    "open": "open → the defender's phone shows the request",
    "bid": "bid → both phones show the throw buttons",
}


def _step_rows(result: Result, target: load.Target) -> list[Result]:
    """Issue 14: ``<scenario> open`` and ``<scenario> bid`` rows, the round
    trips before the throws of the challenges ``result`` played (seconds;
    no CPU of their own: the challenge's row counts it)."""
    if result.scenario not in STEP_ROWS:
        return []
    return [
        Result(
            f"{result.scenario} {step}",
            result.config,
            result.app,
            latencies=list(target.steps[step]),
            elapsed=result.elapsed,
            note=what,
        )
        for step, what in STEPS.items()
        if target.steps[step]
    ]


async def _play(
    scenario: str,
    target,
    workers: Workers,
    options: Options,
    result: Result,
    remark,
    settle,
    beats,
    stop,
) -> None:
    async def settled() -> str:  # worker CPU is counted from here: reconnects only
        note = await settle()
        remark()
        return note

    if scenario == "paced":
        await load.paced(target, rate=options.rate, duration=options.duration, result=result)
    elif scenario == "saturation":
        await load.saturation(
            target, pairs=options.saturation_pairs, duration=options.duration, result=result
        )
    elif scenario == "burst":
        await load.burst(target, result=result, on_ready=remark)
    elif scenario == "heartbeat":
        await load.heartbeat(
            target, beats=beats, duration=options.heartbeat_duration, result=result
        )
    elif scenario == "time_out":
        await load.time_out(target, result=result)
    elif scenario in CROWDED:
        # The row's figures are its Time out's, as the time_out row's (CPU
        # from the press); the first views and the play have their own.
        await load.crowded_dashboard(
            target,
            cpu=lambda: workers.stat().cpu,
            beats=beats,
            rate=options.rate,
            duration=options.duration,
            result=result,
            on_time_out=remark,
        )
    elif scenario in EVENINGS:
        if scenario == "evening_bns":
            plan = load.BnsEvening(target)
        elif scenario == "evening_storytelling":
            index = {phone.ident: i for i, phone in enumerate(target.phones)}
            plan = load.StoryEvening(target, lambda cid: _story_skills(index[cid]))
        else:
            plan = load.Evening(target, EVENING_CATEGORIES, _evening_negatives)
        await load.evening(
            target,
            plan=plan,
            rate=options.rate,
            duration=options.duration,
            result=result,
            on_ready=remark,
        )
    elif scenario == "reconnect":
        await load.reconnect(target, result=result, settle=settled)
    elif scenario in ("reconnect_stale", "reconnect_jitter"):
        # The rulings made while away are not counted, nor the Resume after.
        await load.reconnect_stale(
            target,
            result=result,
            settle=settled,
            jitter=scenario == "reconnect_jitter",
            on_done=stop,
        )
    else:
        raise ValueError(f"unknown scenario {scenario!r}")


def _evening_negatives(character_id: int) -> dict[str, list[str]]:
    """The Negative Traits of a bench character's evening sheet, by category."""
    out: dict[str, list[str]] = {}
    for name, category, _, negative in evening_sheet(character_id):
        if negative:
            out.setdefault(category, []).append(name)
    return out


def _story_skills(index: int) -> list[str]:
    """The Skills on bench player ``index``'s storytelling sheet."""
    return [name for name, _, _ in other_sheet("storytelling", index).skills]
