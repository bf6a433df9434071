"""A smoke run of ``manage.py bench --quick``: it starts its own workers (Daphne,
then Uvicorn) on loopback (ports 8580-8591, or from ``BENCH_PORT_BASE``:
parallel worktrees give each its own) and a throwaway SQLite database, so it
runs as a subprocess, outside pytest's test database."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from django.conf import settings

import bench
from bench.report import EVENINGS, Result, rows, table, verdict
from bench.run import NARRATOR_ONLY, STEPS

PORT_BASE = os.getenv("BENCH_PORT_BASE", os.getenv("BENCH_TEST_PORT_BASE", "8580"))
SCENARIOS = ("connect", *bench.SCENARIOS)


def _table(text: str) -> list[dict[str, str]]:
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    head = [cell.strip() for cell in lines[0].strip("|").split("|")]
    return [
        dict(zip(head, (c.strip() for c in line.strip("|").split("|")), strict=True))
        for line in lines[1:]
    ]


@pytest.mark.slow
@pytest.mark.workers
@pytest.mark.parametrize("server", ["daphne", "uvicorn"])
def test_a_quick_bench_prints_every_scenario_with_nothing_lost_doubled_or_closed(server, tmp_path):
    out = tmp_path / "bench.md"
    done = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "bench",
            "--quick",
            "--server",
            server,
            "--port-base",
            PORT_BASE,
            "--redis-port",
            os.environ.get("BENCH_REDIS_PORT", "6393"),
            # A row that never finds idle workers, or a frame that never comes,
            # fails an assertion below instead of the subprocess timeout.
            "--idle-cap",
            "30",
            "--wait",
            "30",
            "--output",
            str(out),
        ],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=300,  # ~3 min on a busy 2-core machine, the crowd row ~20 s of it
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = _table(done.stdout)
    # Issue 14: paced and saturation are followed by their open and bid rows (Narrator's).
    steps = {(f"{s} {step}", "narrator") for s in ("paced", "saturation") for step in STEPS}
    assert {(r["scenario"], r["app"]) for r in rows} == {
        (s, app)
        for s in SCENARIOS
        for app in ("narrator", "bare")
        if not (app == "bare" and s in NARRATOR_ONLY)
    } | steps
    for row in rows:
        assert int(row["n"]) > 0, row
        assert (row["lost"], row["doubled"], row["closed"]) == ("0", "0", "0"), row
        if (row["scenario"], row["app"]) in steps:
            assert row["note"] == STEPS[row["scenario"].split()[1]], row
            assert float(row["p99 ms"]) > 0 and re.match(r"(meets|misses|$)", row["verdict"])
        elif row is not rows[0]:
            # Every row but the first waited for idle workers and says how long.
            assert re.match(r"waited \d+ s for idle", row["note"]), row
    for row in rows:
        if row["app"] == "narrator" and row["scenario"] in ("paced", "saturation", "burst"):
            # Issue 14: every result reached every dashboard, timed, with a verdict.
            assert row["dash lost"] == "0" and float(row["dash p99 ms"]) > 0, row
            assert float(row["CPU ms/each dash"]) >= float(row["CPU ms/each"]), row
            assert re.match(r"(meets|misses: )", row["verdict"]), row
    notes = {(r["scenario"], r["app"]): r["note"] for r in rows}
    for app in ("narrator", "bare"):
        assert re.search(r"\b\d+ of 20 results after 2 s", notes["burst", app]), notes
        assert re.search(
            r"after the drop waited \d+ s for idle, 40 of 40 back in", notes["reconnect", app]
        ), notes
        # Issue 14: 40 phones and 2 dashboards ping once in the 10 s heartbeat row.
        assert re.match(
            r"waited \d+ s for idle, 42 pings from 42 sockets every 10 s", notes["heartbeat", app]
        ), notes
        # Issue 14: screens stale (rulings while away), the dashboards dropped too:
        # 40 phones and 1 dashboard (the other made the rulings) come back to views;
        # on Narrator the 30 phones that missed only the Time out to its banner,
        # the 10 whose challenge was voided to that card (they name their cards).
        answers = "1 whole views, 0 pong, 30 the Time out banner only, 10 only the cards that"
        if app == "bare":
            answers = "41 whole views, 0 pong"
        for storm, how in (("reconnect_stale", "all at once"), ("reconnect_jitter", "jittered")):
            assert re.search(rf"{how}.*41 of 41 back in [\d.]+ s: {answers}", notes[storm, app]), (
                notes
            )
        assert "5 challenges voided and Time out called" in notes["reconnect_stale", "narrator"]
    for row in rows:
        if row["scenario"] in ("reconnect_stale", "reconnect_jitter"):
            assert row["dash lost"] == "0" and float(row["dash p99 ms"]) > 0, row
        if row["scenario"] == "heartbeat":
            assert int(row["n"]) == 42 and float(row["CPU % core"]) > 0, row
        if row["scenario"] == "paced":  # heartbeats run in every row, timed in its note
            assert re.search(r"\d+ pings: to the answer p50 \d+ ms", row["note"]), row
    assert re.search(r"resolved \(10 voided by a narrator\)", done.stdout), done.stdout[-500:]
    # The paced row's CPU with and without its pings, at the heartbeat row's cost per ping.
    assert re.search(
        r"narrator paced: [\d.]+ ms a challenge, of which ~[\d.]+ ms its \d+ pings "
        r"\([\d.]+ ms each in the heartbeat row\); ~[\d.]+ ms without them",
        done.stdout,
    ), done.stdout[-1500:]
    # Issue 14: the evenings are played to their results from what the cards offer:
    # met_classic with a mob scene (the 10th of 15 starts), bns test pools, dice.
    evenings = {r["scenario"]: r for r in rows if r["scenario"] in EVENINGS}
    for row in evenings.values():
        assert row["dash lost"] == "0" and float(row["dash p99 ms"]) > 0, row
        assert int(row["n"]) == 15 and "voided: stuck" not in row["note"], row
        assert re.match(r"(meets|misses: )", row["verdict"]), row
    assert re.search(r"\b14 challenges\b", evenings["evening"]["note"]), evenings
    assert re.search(r"\b1 mob scenes\b", evenings["evening"]["note"]), evenings
    bns = evenings["evening_bns"]["note"]
    assert re.search(r"40 of 40 phones and 2 dashboards connected for the row", bns), bns
    assert re.search(r"\b15 challenges\b", bns) and re.search(r"\d+ brawl attacks", bns), bns
    dice = evenings["evening_storytelling"]["note"]
    assert re.search(r"\b11 contested rolls\b", dice) and re.search(r"\b4 rolls called\b", dice)
    assert "0 challenges with a doubled loss" in done.stdout
    assert "0 evening challenges or Traits with more lost than bid or held" in done.stdout
    # checkstate's check on each configuration's database after its rows: clean.
    verdicts = re.findall(r"^- .*: checkstate: .*$", done.stdout, re.MULTILINE)
    assert verdicts and all(v.endswith(": checkstate: consistent") for v in verdicts), verdicts
    # The mob scene settled; every roll rolled once; no result twice; Willpower held.
    assert re.search(r"1 mob scenes \(1 settled\), 15 dice rolls \(15 rolled\)", done.stdout)
    assert "0 results or rolls doubled, 0 characters with more Willpower" in done.stdout
    # Issue 30: the crowded dashboard (150 characters, 600 challenges, 100 open)
    # gets a first view under 64 KiB and stays connected the whole row; its
    # other figures (CPU, update size, Time out p95) are printed and judged, not
    # asserted here: speed is the bench's to tell, not CI's.
    crowd = next(r for r in rows if r["scenario"] == "crowded_dashboard")
    assert crowd["app"] == "narrator" and int(crowd["n"]) == 150, crowd
    assert re.match(r"(meets|misses: )", crowd["verdict"]), crowd
    assert re.search(r"150 of 150 phones and 2 dashboards connected for the row", crowd["note"])
    views = r"first view [\d,]+ bytes and \d+ ms of worker CPU \(10 connects\)"
    assert re.search(views, crowd["note"]), crowd
    assert re.search(r"\b15 challenges played among the crowd", crowd["note"]), crowd
    line = re.search(r"^- memory/1w/sqlite crowded dashboard: .*$", done.stdout, re.MULTILINE)
    assert line, done.stdout[-1500:]
    assert re.search(r"first view [\d.]+ KiB \(≤ 64 KiB ✓\)", line.group()), line.group()
    assert "connected the whole row ✓; Time out on 150 phones, 0 lost in the row ✓" in line.group()
    assert re.search(r"the time_out row's \d+ ms on 40 phones \(≤ 1.5× [✓✗]\)", line.group())
    assert out.read_text().strip() == done.stdout.strip()


def _result(scenario: str, app: str = "narrator", **figures) -> Result:
    r = Result(scenario=scenario, config="1 worker", app=app, elapsed=1.0)
    r.latencies = figures.pop("latencies", [0.010] * 100)
    for name, value in figures.items():
        setattr(r, name, value)
    return r


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (_result("paced", dashboard_latencies=[0.1] * 100), "meets"),
        (
            _result("paced", dashboard_latencies=[14.2] * 100),
            "misses: dashboard p99 14.2 s > 250.0 ms",
        ),
        (
            _result("paced", dashboard_latencies=[0.1] * 100, cpu_seconds_dashboards=5.0),
            "misses: CPU ms/each, dashboards included 50.0 ms > 10.0 ms",
        ),
        (
            _result("paced", latencies=[0.5] * 100),
            "misses: p99 500.0 ms > 100.0 ms; p99 ×bare 50.0× > 3.0×",
        ),
        (_result("burst", idle_after=45.0), "misses: idle after 45.0 s > 5.0 s"),
        (_result("burst", dashboard_lost=3), "misses: lost 3 > 0"),
        (_result("reconnect", elapsed=12.0), "misses: elapsed 12.0 s > 10.0 s"),
        (
            _result("reconnect_jitter", elapsed=11.0, dashboard_lost=1),
            "misses: lost 1 > 0; elapsed 11.0 s > 10.0 s",
        ),
        (_result("heartbeat", elapsed=30.0, cpu_seconds=0.9), "meets"),
        (
            _result("heartbeat", elapsed=30.0, cpu_seconds=3.0, lost=2),
            "misses: lost 2 > 0; CPU of a core 10.0 % > 5.0 %",
        ),
        (_result("connect"), ""),
        (_result("paced bid", latencies=[0.3] * 100), "misses: p99 300.0 ms > 100.0 ms"),
        (_result("saturation open", latencies=[0.3] * 100), ""),
        (_result("paced", app="bare", latencies=[9.0]), ""),
        (
            _result(
                "crowded_dashboard",
                first_view_bytes=60_000,
                first_view_cpu=0.04,
                update_bytes=2_000,
                dashboards_dropped=0,
                time_out_today=0.008,  # p95 10 ms: 1.25× the time_out row's
            ),
            "meets",
        ),
        (
            _result(
                "crowded_dashboard",
                first_view_bytes=70_000,
                first_view_cpu=0.15,
                update_bytes=9_000,
                dashboards_dropped=1,
                lost=2,
                dashboard_lost=9,  # results the window never listed: not judged
                time_out_today=0.005,
            ),
            "misses: lost 2 > 0; first view 68.4 KiB > 64.0 KiB; first view CPU 150.0 ms > "
            "100.0 ms; update 8.8 KiB > 8.0 KiB; dashboards dropped 1 > 0; "
            "Time out p95 ×time_out 2.0× > 1.5×",
        ),
    ],
)
def test_each_row_gets_a_one_line_verdict_against_the_issue_14_goals(result, expected):
    assert verdict(result, _result("paced", app="bare")) == expected


def test_the_table_prints_the_dashboard_columns_and_the_verdict_beside_the_old_ones():
    narrator = _result(
        "paced",
        dashboard_latencies=[0.2, 0.3],
        dashboard_lost=1,
        cpu_seconds=5.1,
        cpu_seconds_dashboards=9.0,
        idle_after=45.0,
    )
    printed = dict(
        zip(table([narrator]).splitlines()[0].split("|")[1:-1], rows([narrator])[0], strict=True)
    )
    printed = {k.strip(): v for k, v in printed.items()}
    assert printed["CPU ms/each"] == "51.0"
    assert printed["CPU ms/each dash"] == "90.0"
    assert printed["idle after s"] == "45.0"
    assert (printed["dash p50 ms"], printed["dash p99 ms"], printed["dash lost"]) == (
        "200",
        "300",
        "1",
    )
    assert printed["verdict"].startswith("misses: CPU ms/each, dashboards included 90.0 ms")


def test_the_heartbeat_interval_is_read_from_the_client():
    from bench import load

    assert load.client_constant("HEARTBEAT_MS") == load.HEARTBEAT * 1000 > 0
    js = "var HEARTBEAT_MS = window.NARRATOR_HEARTBEAT_MS || 7000; // tests\nvar CAP = 4000;"
    assert load.client_constant("HEARTBEAT_MS", js) == 7000
    assert load.client_constant("CAP", js) == 4000
    with pytest.raises(LookupError):
        load.client_constant("NOWHERE", js)


def test_repeated_runs_print_the_median_run_with_every_run_in_its_note():
    from bench.report import median_run

    runs = [
        [_result("paced", latencies=[ms / 1000] * 10, note="waited 1 s for idle"), _result("x")]
        for ms in (95, 41, 48)
    ]
    chosen = median_run(runs)
    assert chosen is runs[2]  # p99 48 ms: the median of 41, 48, 95
    assert chosen[0].note == "waited 1 s for idle, median of 3 runs by p99: 95, 41, 48 ms"
    storms = [[_result("reconnect_stale", elapsed=s)] for s in (3.0, 9.0)]
    assert median_run(storms)[0].elapsed == 3.0  # of two, the lower
    assert "median of 2 runs by elapsed: 3000, 9000 ms" in storms[0][0].note
    single = [[_result("burst", note="as it was")]]
    assert median_run(single)[0].note == "as it was"
    with pytest.raises(ValueError):
        median_run([])


def test_the_pings_share_of_a_rows_cpu_is_told_at_the_heartbeat_rows_cost_per_ping():
    """Issue 14: the paced row's CPU per challenge counts its sockets' pings
    (a goal of their own); the checks say how much, at the heartbeat row's
    CPU per ping, and only where that row ran for the same app."""
    from bench.report import heartbeat_shares

    paced = _result("paced", cpu_seconds_dashboards=4.0, pings=1000)  # 100 challenges: 40 ms
    beat = _result("heartbeat", cpu_seconds=1.5, pings=1000)  # 1.5 ms a ping
    bare = _result("paced", app="bare", cpu_seconds=0.5, pings=1000)
    assert heartbeat_shares([paced, beat, bare]) == [
        "1 worker narrator paced: 40.0 ms a challenge, of which ~15.0 ms its 1,000 pings "
        "(1.50 ms each in the heartbeat row); ~25.0 ms without them"
    ]
    assert heartbeat_shares([paced]) == []  # no heartbeat row: nothing to tell
    storm = _result("reconnect_stale", cpu_seconds=4.0, pings=1000)  # no challenges
    assert heartbeat_shares([storm, beat]) == []
    assert heartbeat_shares([_result("paced", cpu_seconds_dashboards=4.0), beat]) == []


def test_redis_with_2_workers_is_judged_against_the_in_memory_figures():
    """Issue 14: "the same scenarios on Redis with 2 workers on PostgreSQL:
    within 2× of the in-memory figures", each scenario by its key figure and
    the challenges' CPU, a verdict each; the steps, connect and bare left out."""
    from bench.report import against_in_memory

    def row(scenario, config, app="narrator", **figures):
        r = _result(scenario, app=app, **figures)
        r.config = config
        return r

    memory, redis = "memory/1w/sqlite", "redis/2w/postgres"
    results = [
        row("connect", memory),
        row("paced", memory, latencies=[0.050] * 10, cpu_seconds_dashboards=0.4),
        row("paced open", memory),
        row("time_out", memory, latencies=[0.200] * 10),
        row("connect", redis, latencies=[9.0] * 10),
        row("paced", redis, latencies=[0.150] * 10, cpu_seconds_dashboards=0.6),
        row("paced open", redis, latencies=[9.0] * 10),
        row("paced", redis, app="bare", latencies=[9.0] * 10),
        row("time_out", redis, latencies=[0.300] * 10),
        row("burst", memory, latencies=[8.0] * 10),
        row("burst", redis, latencies=[], lost=750),  # every result later than --wait
    ]
    assert against_in_memory(results) == [
        "redis/2w/postgres against memory/1w/sqlite (goal ≤ 2×): "
        "paced p99 3.0× misses, CPU 1.5× meets; time_out p95 1.5× meets; "
        "burst no result measured: misses, 750 lost: misses"
    ]
    assert against_in_memory([r for r in results if r.config == redis]) == []


async def test_a_ping_due_before_the_heartbeat_row_is_sent_but_neither_counted_nor_timed():
    """A tick due before the heartbeat row still pings (app.js would), but its
    answer is not the row's: it is neither counted nor timed (CI once timed
    43 answers for 42 pings under Daphne); the next tick, due in the row, is."""
    import asyncio
    import time
    from types import SimpleNamespace

    from websockets.protocol import State

    from bench.load import Conn, Heartbeats

    phone = Conn("ws://127.0.0.1:1/ws/play/7/", "http://127.0.0.1:1")
    phone.ws = SimpleNamespace(state=State.OPEN)
    sent: list[str] = []

    async def send(text: str) -> None:
        sent.append(text)

    phone._send = send
    beats = Heartbeats(0.3)
    beats.since = time.perf_counter() + 0.15  # the first tick (now) is due before the row
    beating = asyncio.create_task(phone._beat(beats, 0.0))
    try:
        while len(sent) < 1:
            await asyncio.sleep(0.005)
        assert (phone.pings, phone.ping_at) == (0, 0.0)
        while len(sent) < 2:
            await asyncio.sleep(0.005)
        assert phone.pings == 1 and phone.ping_at > beats.since
    finally:
        beating.cancel()


def test_an_evening_sheet_is_like_the_demos_and_the_same_every_run():
    from bench.fixtures import EVENING_CATEGORIES, evening_sheet

    sheet = evening_sheet(42)
    assert sheet == evening_sheet(42) != evening_sheet(43)
    assert 12 <= len(sheet) <= 20
    assert {category for _, category, _, _ in sheet} == set(EVENING_CATEGORIES)
    assert all(1 <= count <= 3 for _, _, count, _ in sheet)
    for category in EVENING_CATEGORIES:
        assert sum(neg for _, cat, _, neg in sheet if cat == category) == 1
        names = [name for name, cat, _, _ in sheet if cat == category]
        assert len(names) == len(set(names))


async def test_a_ruling_refused_as_too_many_messages_is_tapped_again_and_counted(monkeypatch):
    """The stale storm's kept dashboard: a void the server refuses as too many
    messages (an overload read her taps bunched) is tapped again after a
    pause, counted in the note; any other refusal still stops the row."""
    from bench import load
    from challenges.ratelimit import REFUSED_MESSAGE

    monkeypatch.setattr(load, "REFUSED_PAUSE", 0.0)
    monkeypatch.setattr(load, "RULINGS_PER_SECOND", 1000.0)

    class Dashboard:
        def __init__(self, answers: list[dict]) -> None:
            self.answers, self.sent = answers, []

        async def act(self, **message) -> dict:
            self.sent.append(message.get("challenge", message["action"]))
            return self.answers.pop(0) if self.answers else {"type": "ack"}

    too_many = {"type": "error", "message": REFUSED_MESSAGE}
    ack = {"type": "ack"}
    kept = Dashboard([ack, too_many, too_many, ack, ack, too_many])
    note = await load.Narrator([], [kept]).while_away([1, 2, 3])
    # The Time out is a tap like the voids: refused as too many, tapped again.
    assert kept.sent == [1, 2, 2, 2, 3, "session.time_out", "session.time_out"]
    assert note == (
        "3 challenges voided and Time out called "
        "(3 taps refused as too many messages, tapped again)"
    )
    kept = Dashboard([{"type": "error", "message": "No such challenge."}])
    with pytest.raises(load.Lost, match="1 voids refused"):
        await load.Narrator([], [kept]).while_away([1])
    kept = Dashboard([ack, {"type": "error", "message": "Already in time out."}])
    with pytest.raises(load.Lost, match="Time out refused"):
        await load.Narrator([], [kept]).while_away([1])


def test_one_start_in_twenty_of_the_evening_is_a_mob_scene_the_first_half_way():
    from bench.load import MOB_SHARE, mob_turn

    turns = [start for start in range(100) if mob_turn(start)]
    assert turns == [9, 29, 49, 69, 89]
    assert len(turns) == 100 * MOB_SHARE


def test_a_phone_keeps_each_card_mob_scene_and_roll_and_its_start_forms_as_shown():
    from bench.load import Conn, _options

    phone = Conn("ws://127.0.0.1:1/ws/play/7/", "http://127.0.0.1:1")
    frame = (
        '<article id="card-3" class="card pooled stage-answer">bns</article>'
        '<article id="card-4" class="card stage-throws yours">met</article>'
        '<section id="mob-scenes"><article class="card mob" data-mob="5" data-stage="bids">'
        'a</article><article class="card mob resolved" data-mob="2" data-stage="settled">'
        "b</article></section>"
        '<article class="card roll roll-contested resolved" id="roll-6" data-roll="6">c</article>'
        '<fieldset class="attacks"><button class="primary" name="attack" value="brawl">'
        "</fieldset>"
        '<details id="roll-start"><select name="attribute"><option value="Wits">Wits</option>'
        '</select><select name="skill"><option value="">None</option>'
        '<option value="Stealth">Stealth</option></select></form></details>'
    )
    phone._read_cards(1.0, frame)
    assert {pk: html[-3:] for pk, (_, html) in phone.cards.items()} == {3: "bns", 4: "met"}
    assert sorted(phone.mobs) == [2, 5] and 'data-stage="settled"' in phone.mobs[2][1]
    assert list(phone.rolls) == [6] and phone.rolls[6][0] == 1.0
    assert 'value="brawl"' in phone.start_forms["attacks"]
    assert _options(phone.start_forms["contest"], "attribute") == ["Wits"]
    assert _options(phone.start_forms["contest"], "skill") == ["", "Stealth"]
    assert _options("", "skill") == []


@pytest.mark.parametrize("ruleset", ["bns", "storytelling"])
def test_the_other_evenings_play_the_demos_players_sheets_in_turn(ruleset):
    from bench.fixtures import other_sheet

    sheets = [other_sheet(ruleset, i) for i in range(8)]
    assert all(sheet.player for sheet in sheets)
    assert sheets[:4] == sheets[4:] and len({sheet.name for sheet in sheets}) == 4


def test_only_a_whole_view_marked_as_a_heartbeats_answer_answers_a_ping():
    """A loser's whole view that comes while her ping waits is not the ping's
    answer (the bench counted those as stale screens); the server marks the
    one that is (``HEARTBEAT_MARK``)."""
    from bench.load import HEARTBEAT_MARK, Conn
    from challenges.consumers.base import HEARTBEAT_MARK as SERVERS

    assert HEARTBEAT_MARK == SERVERS
    phone = Conn("ws://127.0.0.1:1/ws/play/7/", "http://127.0.0.1:1")
    phone.ping_at = 1.0
    phone._on_frame(1.5, '<!--v:aa--><div id="live" hx-swap-oob="true">a move</div>')
    assert phone.ping_at == 1.0 and phone.stamp == "aa"  # still waiting for its answer
    phone._on_frame(2.0, f'<!--v:bb-->{HEARTBEAT_MARK}<div id="live">the answer</div>')
    assert phone.ping_at == 0.0 and phone.pongs == [1.0] and phone.ping_views == 1
    phone.ping_at = 3.0
    phone._on_frame(3.25, '{"type": "pong"}')
    assert phone.pongs == [1.0, 0.25] and phone.ping_views == 1


def test_a_syncs_whole_view_is_not_counted_as_a_pings_answer():
    """The evening rows start with a sync per phone (a whole view each, marked
    as a heartbeat's answer): those came while pings waited and were counted
    as stale screens' pings (1,164 at 1,500 storytelling phones)."""
    from bench.load import HEARTBEAT_MARK, Conn

    phone = Conn("ws://127.0.0.1:1/ws/play/7/", "http://127.0.0.1:1")
    phone.syncs, phone.ping_at = 1, 1.0
    phone._on_frame(1.5, f'<!--v:aa-->{HEARTBEAT_MARK}<div id="live">the sync</div>')
    assert phone.syncs == 0 and phone.ping_at == 1.0 and phone.ping_views == 0
    phone._on_frame(2.0, f'<!--v:bb-->{HEARTBEAT_MARK}<div id="live">the ping</div>')
    assert phone.ping_at == 0.0 and phone.pongs == [1.0] and phone.ping_views == 1


def test_the_crowded_dashboard_prints_each_figure_beside_its_goal_with_a_tick_or_a_cross():
    """Issue 30's row: first view ≤ 64 KiB and ≤ 100 ms of worker CPU, an
    update ≤ 8 KiB, connected the whole row, Time out on every phone at the
    time_out row's p95 of the same run (its configuration and app); unjudged
    without one. The bare app has no dashboard: no line."""
    from bench.report import compare_time_out, crowded_lines

    crowd = _result(
        "crowded_dashboard",
        latencies=[0.045] * 150,
        first_view_bytes=64_000,
        first_view_cpu=0.0532,
        update_bytes=1_700,
        dashboards_dropped=0,
    )
    assert crowded_lines([crowd]) == [
        "1 worker crowded dashboard: first view 62.5 KiB (≤ 64 KiB ✓), 53.2 ms of worker CPU "
        "(≤ 100 ms ✓); largest update 1.7 KiB (≤ 8 KiB ✓); connected the whole row ✓; "
        "Time out on 150 phones, 0 lost in the row ✓, p95 45 ms "
        "(no time_out row in this run to compare)"
    ]
    today = _result("time_out", latencies=[0.310] * 1500)
    other = _result("time_out", latencies=[0.001] * 40)
    other.config = "2 workers"
    compare_time_out([crowd, other, today, _result("time_out", app="bare")])
    assert (crowd.time_out_today, crowd.time_out_phones) == (0.310, 1500)
    assert crowded_lines([crowd])[0].endswith(
        "p95 45 ms, the time_out row's 310 ms on 1500 phones (≤ 1.5× ✓)"
    )
    dropped = _result(
        "crowded_dashboard",
        latencies=[0.9] * 148,
        lost=2,
        first_view_bytes=70_000,
        first_view_cpu=0.2,
        update_bytes=9_000,
        dashboards_dropped=1,
        time_out_today=0.310,
        time_out_phones=1500,
    )
    assert crowded_lines([dropped, _result("crowded_dashboard", app="bare")]) == [
        "1 worker crowded dashboard: first view 68.4 KiB (≤ 64 KiB ✗), 200.0 ms of worker CPU "
        "(≤ 100 ms ✗); largest update 8.8 KiB (≤ 8 KiB ✗); connected the whole row ✗; "
        "Time out on 148 phones, 2 lost in the row ✗, p95 900 ms, the time_out row's 310 ms "
        "on 1500 phones (≤ 1.5× ✗)"
    ]


def test_a_dashboards_frames_are_sized_and_its_whole_views_told_from_its_updates():
    from bench.load import Conn, copies

    dashboard = Conn("ws://127.0.0.1:1/ws/narrate/3/", "http://127.0.0.1:1", cookie="abc")
    dashboard._on_frame(1.0, '<!--v:aa--><div id="challenge-list">é</div>')
    assert dashboard.sizes is None  # not kept unless asked
    dashboard.sizes = []
    dashboard._on_frame(1.0, '<!--v:aa--><div id="challenge-list">é</div>')
    dashboard._on_frame(2.0, '<!--v:bb--><article id="challenge-9" class="row">')
    assert dashboard.sizes == [(44, True), (49, False)]  # bytes, é is two
    twins = copies(dashboard, 3)
    assert len(twins) == 3 and all(t.sizes == [] and t.ws is None for t in twins)
    assert {(t.url, t.origin, t.headers["Cookie"]) for t in twins} == {
        (dashboard.url, dashboard.origin, "sessionid=abc")
    }


@pytest.mark.django_db
def test_the_crowd_has_150_characters_present_and_600_challenges_100_open_consistently(tmp_path):
    """Issue 30's crowd, made in a second or two (copies of two challenges
    played), with a history ``manage.py checkstate`` finds consistent."""
    import json

    from bench.fixtures import crowd
    from challenges.consistency import find_inconsistencies
    from challenges.models import Challenge, TraitLoss
    from characters.models import Presence

    out = tmp_path / "crowd.json"
    crowd(str(out))
    made = json.loads(out.read_text())
    assert len(made["phones"]) == 150 and all(len(cookie) == 32 for _, cookie in made["phones"])
    session = made["session"]
    assert Presence.objects.filter(session_id=session, status="present").count() == 150
    challenges = Challenge.objects.filter(session_id=session)
    assert challenges.count() == 600
    assert challenges.exclude(stage="resolved").count() == 100
    assert TraitLoss.objects.filter(session_id=session).count() == 500
    sides = set(challenges.values_list("challenger_id", "defender_id"))
    assert len(sides) > 400  # drawn among the crowd, not one pair copied
    assert find_inconsistencies() == []
