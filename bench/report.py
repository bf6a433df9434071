"""Figures of one scenario on one app, and the printed table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100) of ``values``; 0.0 if empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))  # ceil
    return ordered[int(rank) - 1]


@dataclass
class Result:
    """One scenario × configuration × app: latencies in seconds, counts, CPU."""

    scenario: str
    config: str
    app: str
    latencies: list[float] = field(default_factory=list)
    elapsed: float = 0.0  # seconds, first start to last result
    lost: int = 0
    skipped: int = 0  # paced starts with no idle pair
    unplayable: int = 0  # challenges not started: a phone of the pair is not connected
    doubled: int = 0
    server_closed: int = 0
    cpu_seconds: float = 0.0  # worker CPU (user + system) during the scenario
    note: str = ""
    # Issue 14: each result's arrival on every dashboard, seconds from the last throw.
    dashboard_latencies: list[float] = field(default_factory=list)
    dashboard_lost: int = 0  # results some dashboard never showed
    # results a dashboard never showed that had left its list of the newest first
    dashboard_windowed: int = 0
    cpu_seconds_dashboards: float = 0.0  # worker CPU until every dashboard has every result
    idle_after: float = 0.0  # seconds the worker stayed busy after the last phone result
    pings: int = 0  # heartbeats the row's sockets sent (counted ones in the heartbeat row)
    # Issue 30, the crowded dashboard row (bench.load.crowded_dashboard): bytes,
    # worker CPU seconds per first view, whole views sent again, dashboards that
    # closed (None: not measured).
    first_view_bytes: int = 0
    first_view_cpu: float = 0.0
    update_bytes: int = 0
    whole_views: int = 0
    dashboards_dropped: int | None = None
    time_out_today: float = 0.0  # the time_out row's p95 (seconds) in the same run; 0: none
    time_out_phones: int = 0  # the phones that time_out row timed

    def add(self, seconds: float) -> None:
        self.latencies.append(seconds)

    @property
    def count(self) -> int:
        return len(self.latencies)

    @property
    def rate(self) -> float:
        return self.count / self.elapsed if self.elapsed else 0.0

    def ms(self, q: float) -> float:
        return percentile(self.latencies, q) * 1000

    @property
    def cpu_ms_per_item(self) -> float:
        return self.cpu_seconds * 1000 / self.count if self.count else 0.0

    @property
    def cpu_percent(self) -> float:
        """Worker CPU as a percentage of one core over ``elapsed`` (0.0 if none)."""
        return self.cpu_seconds * 100 / self.elapsed if self.elapsed else 0.0

    def dashboard_ms(self, q: float) -> float:
        return percentile(self.dashboard_latencies, q) * 1000

    @property
    def cpu_ms_per_item_dashboards(self) -> float:
        """Worker CPU per challenge in ms, counted until the dashboards have it too."""
        return self.cpu_seconds_dashboards * 1000 / self.count if self.count else 0.0


@dataclass(frozen=True)
class Goal:
    """One issue-14 goal: ``figure(result, bare)`` must stay at or under ``limit``.

    ``scenarios`` names the rows it applies to; ``label`` and ``unit`` print it
    ("dashboard p99", "ms"). Limits are issue 14's (2-core machine, memory layer,
    1 worker)."""

    label: str
    scenarios: tuple[str, ...]
    limit: float
    unit: str
    figure: Callable[[Result, Result | None], float | None]


def _ratio_to_bare(q: float) -> Callable[[Result, Result | None], float | None]:
    def figure(r: Result, bare: Result | None) -> float | None:
        if bare is None or not bare.ms(q):
            return None
        return r.ms(q) / bare.ms(q)

    return figure


def _elapsed(r: Result, _bare: Result | None) -> float:
    return r.elapsed


# The rows each played to its result by reading the phones (bench.load.evening).
EVENINGS = ("evening", "evening_bns", "evening_storytelling")

# Issue 30's crowd: a dashboard of 150 characters and 600 challenges, 100 open.
CROWDED = ("crowded_dashboard",)
KIB = 1024
#: Issue 30: the crowd's Time out reaches every phone "at the same p95 as
#: today": at most this multiple of the time_out row's p95 in the same run
#: (one run's p95 moves by as much on a shared machine).
AS_TODAY = 1.5

# Issue 14's goals, and issue 30's for the crowded dashboard, one row each; a
# figure of None (no bare row, nothing measured) is not judged.
GOALS: tuple[Goal, ...] = (
    Goal(
        "CPU ms/each, dashboards included",
        ("paced", "saturation", "burst", *EVENINGS),
        10.0,
        "ms",
        lambda r, _b: r.cpu_ms_per_item_dashboards,
    ),
    Goal("p99", ("paced", "paced open", "paced bid"), 100.0, "ms", lambda r, _b: r.ms(99)),
    Goal("p99 ×bare", ("paced",), 3.0, "×", _ratio_to_bare(99)),
    Goal(
        "dashboard p99",
        ("paced", "saturation", "burst", *EVENINGS),
        250.0,
        "ms",
        lambda r, _b: r.dashboard_ms(99),
    ),
    Goal("p99", ("burst",), 2000.0, "ms", lambda r, _b: r.ms(99)),
    Goal(
        "lost",
        ("burst", "reconnect_stale", "reconnect_jitter", "heartbeat", *EVENINGS),
        0,
        "",
        lambda r, _b: r.lost + r.dashboard_lost,
    ),
    Goal("idle after", ("burst",), 5.0, "s", lambda r, _b: r.idle_after),
    Goal("p95 ×bare", ("time_out",), 2.0, "×", _ratio_to_bare(95)),
    Goal("elapsed", ("reconnect", "reconnect_stale", "reconnect_jitter"), 10.0, "s", _elapsed),
    Goal("CPU of a core", ("heartbeat",), 5.0, "%", lambda r, _b: r.cpu_percent),
    # A result a crowded dashboard never listed is not lost: more than the
    # window's results (DASHBOARD_LIMIT) newer ones came in the same tick.
    Goal("lost", CROWDED, 0, "", lambda r, _b: r.lost),
    Goal("first view", CROWDED, 64.0, "KiB", lambda r, _b: r.first_view_bytes / KIB),
    Goal("first view CPU", CROWDED, 100.0, "ms", lambda r, _b: r.first_view_cpu * 1000),
    Goal("update", CROWDED, 8.0, "KiB", lambda r, _b: r.update_bytes / KIB),
    Goal("dashboards dropped", CROWDED, 0, "", lambda r, _b: r.dashboards_dropped),
    Goal(
        "Time out p95 ×time_out",
        CROWDED,
        AS_TODAY,
        "×",
        lambda r, _b: r.ms(95) / (r.time_out_today * 1000) if r.time_out_today else None,
    ),
)


# The rows whose results are challenges (or rolls): their CPU is told per challenge.
CHALLENGE_ROWS = ("paced", "saturation", "burst", *EVENINGS)


def heartbeat_shares(results: list[Result]) -> list[str]:
    """One line per row that played challenges with heartbeats on, when its
    configuration and app also ran the heartbeat row: how much of its "CPU
    ms/each, dashboards included" the row's pings took, at the heartbeat
    row's worker CPU per ping, and the challenge's cost without them (issue
    14: the paced row's CPU counts 1,500 phones' pings, a goal of its own).
    E.g. ``"memory/1w/sqlite narrator paced: 46.6 ms a challenge, of which
    ~17.8 ms its 9,075 pings (1.96 ms each in the heartbeat row); ~28.8 ms
    without them"``. An estimate: a ping answered in a busy row may cost
    more or less than in the quiet heartbeat row."""
    per_ping = {
        (r.config, r.app): r.cpu_seconds / r.pings
        for r in results
        if r.scenario == "heartbeat" and r.pings and r.cpu_seconds
    }
    lines = []
    for r in results:
        each = per_ping.get((r.config, r.app))
        if each is None or r.scenario not in CHALLENGE_ROWS or not (r.pings and r.count):
            continue
        total = r.cpu_ms_per_item_dashboards or r.cpu_ms_per_item
        if not total:
            continue
        pinged = r.pings * each * 1000 / r.count
        lines.append(
            f"{r.config} {r.app} {r.scenario}: {total:.1f} ms a challenge, of which "
            f"~{pinged:.1f} ms its {r.pings:,} pings ({each * 1000:.2f} ms each in the "
            f"heartbeat row); ~{max(0.0, total - pinged):.1f} ms without them"
        )
    return lines


def compare_time_out(results: list[Result]) -> None:
    """Give each crowded dashboard row of ``results`` the p95 of the time_out
    row of its configuration and app (``time_out_today``, seconds; 0 if
    none measured) and how many phones it timed (``time_out_phones``)."""
    today = {(r.config, r.app): r for r in results if r.scenario == "time_out"}
    for r in results:
        if r.scenario in CROWDED and (base := today.get((r.config, r.app))) is not None:
            r.time_out_today, r.time_out_phones = base.ms(95) / 1000, base.count


def _tick(ok: bool) -> str:
    return "✓" if ok else "✗"


def crowded_lines(results: list[Result]) -> list[str]:
    """Issue 30's goals for each crowded dashboard row (Narrator's) of
    ``results``: one line each, every figure beside its goal and ✓ or ✗,
    e.g. ``"memory/1w/sqlite crowded dashboard: first view 62.5 KiB (≤ 64
    KiB ✓), 38.0 ms of worker CPU (≤ 100 ms ✓); largest update 2.1 KiB (≤ 8
    KiB ✓); connected the whole row ✓; Time out on 150 phones, 0 lost in
    the row ✓, p95 45 ms, the time_out row's 310 ms on 1500 phones (≤
    1.5× ✓)"``. Without a time_out row of the same configuration its p95 is
    printed unjudged (``time_out_today``: :func:`compare_time_out`). The
    bare app has no dashboard: no line."""
    lines = []
    for r in results:
        if r.scenario not in CROWDED or r.app != "narrator":
            continue
        view, cpu = r.first_view_bytes / KIB, r.first_view_cpu * 1000
        update = r.update_bytes / KIB
        line = (
            f"{r.config} crowded dashboard: first view {view:.1f} KiB (≤ 64 KiB "
            f"{_tick(0 < view <= 64)}), {cpu:.1f} ms of worker CPU (≤ 100 ms "
            f"{_tick(0 < cpu <= 100)}); largest update {update:.1f} KiB (≤ 8 KiB "
            f"{_tick(update <= 8)}); connected the whole row {_tick(r.dashboards_dropped == 0)}"
            f"; Time out on {r.count} phones, {r.lost} lost in the row "
            f"{_tick(r.count > 0 and not r.lost)}, p95 {r.ms(95):.0f} ms"
        )
        if not r.time_out_today:
            line += " (no time_out row in this run to compare)"
        else:
            today = r.time_out_today * 1000
            line += (
                f", the time_out row's {today:.0f} ms on {r.time_out_phones} phones "
                f"(≤ {AS_TODAY:g}× {_tick(r.ms(95) <= today * AS_TODAY)})"
            )
        lines.append(line)
    return lines


# The figure that ranks repeated runs of a scenario (``median_run``): its goal's.
MEDIAN_BY: dict[str, tuple[str, Callable[[Result], float]]] = {
    "time_out": ("p95", lambda r: r.ms(95)),
    "crowded_dashboard": ("p95", lambda r: r.ms(95)),  # its Time out's, as time_out's
    "reconnect": ("elapsed", lambda r: r.elapsed * 1000),
    "reconnect_stale": ("elapsed", lambda r: r.elapsed * 1000),
    "reconnect_jitter": ("elapsed", lambda r: r.elapsed * 1000),
    "heartbeat": ("CPU % core", lambda r: r.cpu_percent),
}
_BY_P99 = ("p99", lambda r: r.ms(99))


def median_run(runs: list[list[Result]]) -> list[Result]:
    """Of repeated runs of one scenario on one app (each a list: the row, then
    its step rows), the run whose key figure (:data:`MEDIAN_BY`, else p99) is
    the median (the lower one of an even count), its row's note ending with
    every run's figure: ``median of 3 runs by p99: 41, 48, 95 ms``. One run
    is returned as it is. Raises ValueError if ``runs`` is empty."""
    if not runs:
        raise ValueError("no run to take the median of")
    if len(runs) == 1:
        return runs[0]
    label, figure = MEDIAN_BY.get(runs[0][0].scenario, _BY_P99)
    ranked = sorted(runs, key=lambda rows: figure(rows[0]))
    chosen = ranked[(len(ranked) - 1) // 2]
    unit = "%" if label.startswith("CPU") else "ms"
    values = ", ".join(f"{figure(rows[0]):.{1 if unit == '%' else 0}f}" for rows in runs)
    said = f"median of {len(runs)} runs by {label}: {values} {unit}"
    chosen[0].note = f"{chosen[0].note}, {said}" if chosen[0].note else said
    return chosen


def against_in_memory(results: list[Result], limit: float = 2.0) -> list[str]:
    """Issue 14's last goal: "the same scenarios on Redis with 2 workers on
    PostgreSQL: within 2× of the in-memory figures". One line per other
    configuration run beside the in-memory one (``memory/…``): each of
    Narrator's scenarios (not its open and bid steps, not connect) by its key
    figure (:data:`MEDIAN_BY`, else p99) and, for the rows of challenges, the
    CPU per challenge (dashboards included), as a multiple of the in-memory
    figure with its verdict, e.g. ``"redis/2w/postgres against
    memory/1w/sqlite (goal ≤ 2×): paced p99 3.1× misses, CPU 2.8× misses;
    time_out p95 1.3× meets"``; a row with results lost (or later than
    ``--wait``) says so, since its figures count only those that came.
    Nothing when no in-memory row ran."""
    base = {
        r.scenario: r
        for r in results
        if r.app == "narrator"
        and r.config.startswith("memory/")
        and r.scenario != "connect"
        and " " not in r.scenario  # a row's steps ("paced open") are timed, not judged apart
    }
    if not base:
        return []
    base_config = next(iter(base.values())).config
    others: dict[str, list[str]] = {}
    for r in results:
        mine = base.get(r.scenario)
        if r.app != "narrator" or mine is None or r.config.startswith("memory/"):
            continue
        label, figure = MEDIAN_BY.get(r.scenario, _BY_P99)
        pairs = [(label, figure(r), figure(mine))]
        if r.scenario in CHALLENGE_ROWS:
            pairs.append(("CPU", r.cpu_ms_per_item_dashboards, mine.cpu_ms_per_item_dashboards))
        told = (
            [
                f"{name} {value / was:.1f}× {'meets' if value / was <= limit else 'misses'}"
                for name, value, was in pairs
                if was
            ]
            if r.count
            else ["no result measured: misses"]
        )
        if lost := r.lost + r.dashboard_lost:  # a figure of what came only
            told.append(f"{lost} lost: misses")
        if told:
            others.setdefault(r.config, []).append(f"{r.scenario} {', '.join(told)}")
    return [
        f"{config} against {base_config} (goal ≤ {limit:g}×): {'; '.join(parts)}"
        for config, parts in others.items()
    ]


def _shown(value: float, unit: str) -> str:
    if not unit:
        return f"{value:g}"
    if unit == "ms" and value >= 1000:
        return f"{value / 1000:.1f} s"
    return f"{value:.1f} {unit}".rstrip() if unit != "×" else f"{value:.1f}×"


def verdict(r: Result, bare: Result | None = None) -> str:
    """One line: "meets", "misses: dashboard p99 14.2 s > 250 ms; ...", or "" (no goal).

    Bare rows are the yardstick and get no verdict."""
    if r.app == "bare":
        return ""
    goals = [g for g in GOALS if r.scenario in g.scenarios]
    missed = []
    for g in goals:
        value = g.figure(r, bare)
        if value is not None and value > g.limit:
            missed.append(f"{g.label} {_shown(value, g.unit)} > {_shown(g.limit, g.unit)}")
    if not goals:
        return ""
    return "misses: " + "; ".join(missed) if missed else "meets"


COLUMNS = (
    "scenario",
    "config",
    "app",
    "n",
    "p50 ms",
    "p95 ms",
    "p99 ms",
    "max ms",
    "done/s",
    "lost",
    "doubled",
    "closed",
    "CPU ms/each",
    "CPU % core",
    "CPU ms/each dash",
    "idle after s",
    "dash p50 ms",
    "dash p95 ms",
    "dash p99 ms",
    "dash lost",
    "p99 ×bare",
    "verdict",
    "note",
)


def rows(results: list[Result]) -> list[list[str]]:
    """Table rows, each Narrator row with its p99 as a multiple of the bare app's."""
    bare = {(r.scenario, r.config): r for r in results if r.app == "bare"}
    out = []
    for r in results:
        base = bare.get((r.scenario, r.config))
        ratio = ""
        if r.app != "bare" and base is not None and base.ms(99) > 0 and r.count:
            ratio = f"{r.ms(99) / base.ms(99):.1f}"
        out.append(
            [
                r.scenario,
                r.config,
                r.app,
                str(r.count),
                f"{r.ms(50):.0f}",
                f"{r.ms(95):.0f}",
                f"{r.ms(99):.0f}",
                f"{r.ms(100):.0f}",
                f"{r.rate:.1f}",
                str(r.lost),
                str(r.doubled),
                str(r.server_closed),
                f"{r.cpu_ms_per_item:.1f}" if r.cpu_seconds else "",
                f"{r.cpu_percent:.1f}" if r.elapsed >= 1 and r.cpu_seconds else "",
                f"{r.cpu_ms_per_item_dashboards:.1f}" if r.cpu_seconds_dashboards else "",
                f"{r.idle_after:.1f}" if r.cpu_seconds_dashboards else "",
                *(
                    [f"{r.dashboard_ms(q):.0f}" for q in (50, 95, 99)] + [str(r.dashboard_lost)]
                    if r.dashboard_latencies or r.dashboard_lost
                    else ["", "", "", ""]
                ),
                ratio,
                verdict(r, base),
                r.note,
            ]
        )
    return out


def table(results: list[Result]) -> str:
    """A Markdown pipe table, readable in a terminal and pasteable into docs."""
    body = rows(results)
    widths = [max(len(c), *(len(row[i]) for row in body)) for i, c in enumerate(COLUMNS)]

    def line(cells) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    return "\n".join(
        [line(COLUMNS), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, body)]
    )
