"""View stamps: a short digest of what one screen shows, for the app-level heartbeat.

Every view frame a consumer sends starts with ``<!--v:STAMP-->``; the phone
echoes the last stamp it got in its ping (``{"action": "ping", "v": STAMP}``).
The consumer recomputes the stamp from the database with one query and answers
``{"type": "pong"}`` when they match, or the full view when they differ, so a
broadcast lost by the channel layer is repaired within one heartbeat without
rendering anything on a healthy ping.

A stamp is the digest of *parts*, small tuples of integers that change whenever
what the screen shows changes:

- a phone: ``session`` (time out, ended), ``screen`` (her challenges in the
  session: count, sum of ``Challenge.version``, highest id; Traits she lost
  tonight; her health level; whether she is on a break; not who is present:
  the websocket view does not list opponents, so an arrival must not make
  every phone resync), ``seat`` (her chronicle's open session id, 0: none)
  and ``mob`` (the mob scenes she is in that it shows, :data:`MOBS_SHOWN`
  at most, newest first: count, sum of ``MobScene.version``);
- a dashboard: ``session``; ``challenges`` (those it lists, a window of each
  section, ``views.DASHBOARD_LIMIT``: the calls, the open ones longest
  waiting, the newest results, as ``views.dashboard_challenges``;
  count, sum of versions, highest id); ``roster`` (characters on the roster,
  i.e. not absent: count, sum of their health levels, Traits they lost in the
  session, how many are on a break); ``mob`` (the session's mob scenes it
  shows, as a phone's); for a chronicle with combat rounds (``bns``, issue
  12) also ``combat`` on both (the combats it shows, :data:`COMBATS_SHOWN`
  at most: count, sum of ``Combat.version``), from its own query, so a MET
  screen's stamp costs nothing more; for a chronicle that rolls dice pools
  (``storytelling``, issue 13) likewise ``fight`` (its Storytelling fights)
  and ``roll`` (:func:`rolls_part`: all her rolls on a phone; on a dashboard
  the ones it lists, :func:`listed_rolls`).

``Challenge.version`` only grows and every move bumps it, so a sum of versions
changes on every move. A consumer that sends a partial frame (one dashboard row,
the time-out banner) recomputes only the part that frame covers, from what it
rendered, so the stamp always describes what the screen really shows.

Issue 14: most pings come from a current screen, so a worker keeps, per
session, one shared *snapshot* of every phone's parts (:class:`Snapshots`,
:data:`phones`), read in one query (:func:`session_play_parts`; one more
per ruleset part, ``combat`` for ``bns``, ``roll`` and ``fight`` for
``storytelling``: :func:`session_extra_parts`) at most every
:data:`SNAPSHOT_SECONDS` and only when a ping needs it. A phone's ping whose
echoed stamp is the one this socket last sent, and the digest of her parts in
a snapshot read after that stamp was set, gets ``pong`` from memory; anything
else gets the exact one-query check. Bound: a change whose broadcast was lost,
committed at time *c*, is seen by every ping from *c* + ``SNAPSHOT_SECONDS``
on (that ping uses a snapshot whose query started after *c*, or the exact
check), so with a ping every 10 s it is repaired within 12 s (10 s before).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import re
import time
from dataclasses import dataclass, field

from channels.db import database_sync_to_async
from django.db import connection
from django.db.models import Q

from challenges.models import (
    Challenge,
    Combat,
    DiceRoll,
    MobScene,
    StoryCombat,
    TraitLoss,
    her_challenges_sql,
)
from characters.models import GameSession, Presence

log = logging.getLogger(__name__)

Parts = dict[str, tuple[int, ...]]

MOBS_SHOWN = 6
"""Mob scenes a screen shows (hers, on a phone), in :data:`MOB_ORDER`: those
going on first, then the latest settled. Issue 14: the three newest by
creation hid from the dashboards a scene going on behind three newer ones, and
every scene settled after three newer began (at 1,500 phones, 12 of 15)."""

MOB_ORDER = "CASE WHEN m.stage = 'settled' THEN 1 ELSE 0 END, m.created_at DESC, m.id DESC"
"""SQL: the order of a screen's mob scenes (table alias ``m``): going on
first, each group newest first (``views.mob_views`` orders the same)."""


def listed_rolls(rows, shown: int) -> tuple:
    """A dashboard's roll list out of ``rows`` (a ``DiceRoll`` queryset of one
    session, or its ``values_list``): the ``shown`` newest rolls waiting on
    someone (called, contested, an extended action going on: ``rolled_at``
    unset), newest first, then the ``shown`` latest rolled, latest first; two
    sliced querysets (a query each). Issue 14: the 20 newest by creation
    pushed waiting rolls off the list with the narrator's Roll and Resist
    buttons, and results that took a while never showed (3,106 rolls never
    shown on the dashboards in the storytelling evening at 1,500 phones)."""
    return (
        rows.filter(rolled_at__isnull=True).order_by("-created_at", "-id")[:shown],
        rows.filter(rolled_at__isnull=False).order_by("-rolled_at", "-created_at", "-id")[:shown],
    )


COMBATS_SHOWN = 2
"""``bns`` combats a screen shows: the newest of the session (hers, on a phone)."""

FIGHTS_SHOWN = 2
"""Storytelling fights a screen shows (``views.story_combat.FIGHTS_SHOWN``)."""


def digest(parts: Parts) -> str:
    """The stamp of ``parts``: 16 hex characters."""
    text = repr(sorted(parts.items()))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def looks_like_stamp(value: object) -> bool:
    """True if ``value`` has a stamp's shape (16 lowercase hex characters)."""
    return (
        isinstance(value, str) and len(value) == 16 and all(c in "0123456789abcdef" for c in value)
    )


def session_part(session: GameSession) -> tuple[int, int]:
    """The ``session`` part from a session row just read (time out, ended)."""
    return (int(session.time_out), int(session.ended_at is not None))


def aggregate(versions: dict[int, int]) -> tuple[int, int, int]:
    """The ``challenges`` part of the challenges a screen shows, ``{id: version}``."""
    return (len(versions), sum(versions.values()), max(versions, default=0))


@functools.cache  # the names are the models', fixed for the process
def _tables() -> dict[str, str]:
    return {
        "session": GameSession._meta.db_table,
        "challenge": Challenge._meta.db_table,
        "loss": TraitLoss._meta.db_table,
        "presence": Presence._meta.db_table,
        "mob": MobScene._meta.db_table,
        "mob_people": MobScene.participants.through._meta.db_table,
        "mobs_shown": str(MOBS_SHOWN),
        "mob_order": MOB_ORDER,
        # Her challenges of the session, a side at a time (issue 14).
        "mine": her_challenges_sql("%(session)s", "%(character)s"),
    }


_PLAY_SQL = """
SELECT s.time_out, s.ended_at IS NOT NULL, c.n, c.v, c.m,
  (SELECT COUNT(*) FROM {loss} l WHERE l.session_id = s.id AND l.character_id = %(character)s),
  (SELECT p.health FROM {presence} p WHERE p.session_id = s.id AND p.character_id = %(character)s),
  (SELECT COUNT(*) FROM {presence} p WHERE p.session_id = s.id
     AND p.character_id = %(character)s AND p.status = 'break'),
  (SELECT COALESCE(MAX(o.id), 0) FROM {session} o
     WHERE o.chronicle_id = s.chronicle_id AND o.ended_at IS NULL),
  mb.n, mb.v
FROM {session} s,
  (SELECT COUNT(*) AS n, COALESCE(SUM(version), 0) AS v, COALESCE(MAX(id), 0) AS m
   FROM {challenge} WHERE id IN ({mine})) c,
  (SELECT COUNT(*) AS n, COALESCE(SUM(x.version), 0) AS v
   FROM (SELECT m.version FROM {mob} m JOIN {mob_people} p ON p.mobscene_id = m.id
         WHERE m.session_id = %(session)s AND p.character_id = %(character)s
         ORDER BY {mob_order} LIMIT {mobs_shown}) x) mb
WHERE s.id = %(session)s
"""

# What a dashboard's ``challenges`` and ``roster`` parts sum, row by row (issue
# 14: a dashboard behind the database is repaired row by row, not by a whole
# view): the challenges it lists, in _DASHBOARD_SQL's order, and the characters
# on its roster with what its roster row shows (_ROSTER_ROWS_SQL). _DASHBOARD_SQL
# sums this very listing. Each section (calls, open ones, results) has its own
# window, in the order ``views.dashboard_place`` puts its rows.
_LISTING_SQL = """
SELECT id, version FROM (
  SELECT id, version FROM (SELECT id, version FROM {challenge}
    WHERE session_id = %(session)s AND called_at IS NOT NULL
    ORDER BY called_at, id DESC LIMIT %(called)s) a
  UNION ALL
  SELECT id, version FROM (SELECT id, version FROM {challenge}
    WHERE session_id = %(session)s AND called_at IS NULL AND stage <> 'resolved'
    ORDER BY stage_since, id DESC LIMIT %(open)s) o
  UNION ALL
  SELECT id, version FROM (SELECT id, version FROM {challenge}
    WHERE session_id = %(session)s AND called_at IS NULL AND stage = 'resolved'
    ORDER BY stage_since DESC, id DESC LIMIT %(results)s) r
) x
"""

_DASHBOARD_SQL = (
    """
SELECT s.time_out, s.ended_at IS NOT NULL, c.n, c.v, c.m, r.n, r.h,
  (SELECT COUNT(*) FROM {loss} l WHERE l.session_id = s.id AND l.character_id IN
     (SELECT character_id FROM {presence} WHERE session_id = s.id AND status <> 'absent')),
  r.b, mb.n, mb.v
FROM {session} s,
  (SELECT COUNT(*) AS n, COALESCE(SUM(x.version), 0) AS v, COALESCE(MAX(x.id), 0) AS m
   FROM ("""
    + _LISTING_SQL
    + """) x) c,
  (SELECT COUNT(*) AS n, COALESCE(SUM(health), 0) AS h,
     COALESCE(SUM(CASE WHEN status = 'break' THEN 1 ELSE 0 END), 0) AS b
   FROM {presence} WHERE session_id = %(session)s AND status <> 'absent') r,
  (SELECT COUNT(*) AS n, COALESCE(SUM(x.version), 0) AS v
   FROM (SELECT m.version FROM {mob} m WHERE m.session_id = %(session)s
         ORDER BY {mob_order} LIMIT {mobs_shown}) x) mb
WHERE s.id = %(session)s
"""
)

_ROSTER_ROWS_SQL = """
SELECT p.character_id, p.health,
  (SELECT COUNT(*) FROM {loss} l WHERE l.session_id = p.session_id
     AND l.character_id = p.character_id),
  CASE WHEN p.status = 'break' THEN 1 ELSE 0 END
FROM {presence} p WHERE p.session_id = %(session)s AND p.status <> 'absent'
"""


def _listing_params(session_id: int, window) -> dict[str, int]:
    """The listing's parameters: ``window`` has ``called``, ``open`` and
    ``results``, how many rows of each section a dashboard lists
    (``views.DASHBOARD_LIMIT``)."""
    return {
        "session": session_id,
        "called": int(window.called),
        "open": int(window.open),
        "results": int(window.results),
    }


def listed_challenges(session_id: int, window) -> tuple[str, list[int]]:
    """The ids of the challenges a dashboard lists, as SQL and its
    parameters for a subquery (``RawSQL``, ``id IN (…)``): each section's
    window (``window``: calls, open ones, results)."""
    named = _listing_params(session_id, window)
    params: list[int] = []

    def positional(found: re.Match) -> str:
        params.append(named[found.group(1)])
        return "%s"

    sql = re.sub(r"%\((\w+)\)s", positional, _LISTING_SQL.format(**_tables()))
    return f"SELECT id FROM ({sql}) listed", params


def dashboard_rows(
    session_id: int, window
) -> tuple[dict[int, int], dict[int, tuple[int, int, int]]]:
    """What a dashboard's ``challenges`` and ``roster`` parts are sums of
    (two queries): ``({challenge id: version}`` of the challenges it lists
    (``window``, as :func:`listed_challenges`)``, {character id: (health,
    Traits lost in the session, on a break 0/1)}`` of the characters on its
    roster``)``. The parts of
    :func:`dashboard_parts` read at the same moment are
    :func:`challenges_tally_part` and :func:`roster_part` of these."""
    tables = _tables()
    params = _listing_params(session_id, window)
    with connection.cursor() as cursor:
        cursor.execute(_LISTING_SQL.format(**tables), params)
        listed = {pk: int(version) for pk, version in cursor.fetchall()}
        cursor.execute(_ROSTER_ROWS_SQL.format(**tables), params)
        roster = {
            pk: (int(health), int(lost), int(on_break))
            for pk, health, lost, on_break in cursor.fetchall()
        }
    return listed, roster


def _row(sql: str, params: dict) -> tuple[int, ...] | None:
    with connection.cursor() as cursor:
        cursor.execute(sql.format(**_tables()), params)
        row = cursor.fetchone()
    # SQLite answers 0/1 and PostgreSQL booleans; a missing health is -1.
    return None if row is None else tuple(-1 if v is None else int(v) for v in row)


_SEAT_SQL = """
SELECT COALESCE(MAX(id), 0) FROM {session} WHERE chronicle_id = %(chronicle)s AND ended_at IS NULL
"""


def play_parts(character_id: int, session_id: int | None, chronicle_id: int | None = None) -> Parts:
    """The parts of a phone's view (one query): ``session``, ``screen`` and
    ``seat`` (the id of her chronicle's open session now, 0 if none: a phone
    that missed ``session.changed`` learns it on its next ping). Without a
    session: only ``seat`` if ``chronicle_id`` is given, else ``{}``."""
    if session_id is None:
        if chronicle_id is None:
            return {}
        row = _row(_SEAT_SQL, {"chronicle": chronicle_id})
        return {"seat": row} if row is not None else {}
    row = _row(_PLAY_SQL, {"character": character_id, "session": session_id})
    if row is None:
        return {}
    return {"session": row[:2], "screen": row[2:-3], "seat": row[-3:-2], "mob": row[-2:]}


def dashboard_parts(session_id: int, window) -> Parts:
    """The parts of a narrator's dashboard listing the challenges of
    ``window`` (as :func:`listed_challenges`; one query)."""
    row = _row(_DASHBOARD_SQL, _listing_params(session_id, window))
    if row is None:
        return {}
    return {"session": row[:2], "challenges": row[2:5], "roster": row[5:9], "mob": row[9:]}


# Every phone of a session in one query: _PLAY_SQL's columns, GROUP BY character,
# over one UNION ALL of what each table adds to a character (her challenges, on
# either side, once if both; her Traits lost; her presence; her newest mob
# scenes), so that no plan joins an aggregate per character (PostgreSQL without
# statistics chose nested loops over LEFT JOINs of aggregates: 0.6 s for 1,500).
# One row per character with a row in any of them, and one row (who NULL) if
# none has; a character without a row has the parts of :data:`_NOBODY`.
_PLAYS_SQL = """
SELECT y.who, s.time_out, s.ended_at IS NOT NULL, COALESCE(y.n, 0), COALESCE(y.v, 0),
  COALESCE(y.m, 0), COALESCE(y.l, 0), COALESCE(y.h, -1), COALESCE(y.b, 0), seat.id,
  COALESCE(y.mn, 0), COALESCE(y.mv, 0)
FROM {session} s
CROSS JOIN (SELECT COALESCE(MAX(o.id), 0) AS id FROM {session} o
  WHERE o.ended_at IS NULL
    AND o.chronicle_id = (SELECT chronicle_id FROM {session} WHERE id = %(session)s)) seat
LEFT JOIN (
  SELECT z.who, SUM(z.n) AS n, SUM(z.v) AS v, MAX(z.m) AS m, SUM(z.l) AS l, MAX(z.h) AS h,
    MAX(z.b) AS b, SUM(z.mn) AS mn, SUM(z.mv) AS mv
  FROM (
    SELECT challenger_id AS who, 1 AS n, version AS v, id AS m, 0 AS l,
      CAST(NULL AS INTEGER) AS h, 0 AS b, 0 AS mn, 0 AS mv
    FROM {challenge} WHERE session_id = %(session)s
    UNION ALL
    SELECT defender_id, 1, version, id, 0, NULL, 0, 0, 0 FROM {challenge}
    WHERE session_id = %(session)s AND defender_id IS NOT NULL AND defender_id <> challenger_id
    UNION ALL
    SELECT character_id, 0, 0, NULL, 1, NULL, 0, 0, 0 FROM {loss} WHERE session_id = %(session)s
    UNION ALL
    SELECT character_id, 0, 0, NULL, 0, health, CASE WHEN status = 'break' THEN 1 ELSE 0 END,
      0, 0
    FROM {presence} WHERE session_id = %(session)s
    UNION ALL
    SELECT r.character_id, 0, 0, NULL, 0, NULL, 0, 1, r.version
    FROM (SELECT mp.character_id, m.version, ROW_NUMBER() OVER (
            PARTITION BY mp.character_id ORDER BY {mob_order}) AS r
          FROM {mob} m JOIN {mob_people} mp ON mp.mobscene_id = m.id
          WHERE m.session_id = %(session)s) r
    WHERE r.r <= {mobs_shown}
  ) z GROUP BY z.who
) y ON 1 = 1
WHERE s.id = %(session)s
"""


def _play_rows(session_id: int) -> tuple[tuple | None, dict[int, tuple]]:
    """``(nobody, rows)``: the rows of :data:`_PLAYS_SQL` by character id
    (one query), as read (made into parts only when a ping asks,
    :func:`_row_parts`), and the row of a character who has none (None:
    no such session)."""
    with connection.cursor() as cursor:
        cursor.execute(_PLAYS_SQL.format(**_tables()), {"session": session_id})
        rows = cursor.fetchall()
    if not rows:
        return None, {}
    _, time_out, ended, *_, seat, _, _ = rows[0]
    nobody = (None, time_out, ended, 0, 0, 0, 0, -1, 0, seat, 0, 0)
    return nobody, {row[0]: row for row in rows if row[0] is not None}


def _row_parts(row: tuple) -> Parts:
    # SQLite answers 0/1 and PostgreSQL booleans (and bigints for the sums).
    _, time_out, ended, *screen, seat, mobs, mob_versions = row
    return {
        "session": (int(time_out), int(ended)),
        "screen": tuple(int(v) for v in screen),
        "seat": (int(seat),),
        "mob": (int(mobs), int(mob_versions)),
    }


def session_play_parts(session_id: int) -> tuple[Parts | None, dict[int, Parts]]:
    """:func:`play_parts` of every phone of a session at once (one query,
    GROUP BY character; window functions: SQLite >= 3.25, PostgreSQL):
    ``(nobody, {character id: parts})``, the parts ``play_parts`` gives in
    this session (``session``, ``screen``, ``seat``, ``mob``; never
    ``combat``, ``roll`` or ``fight``) for each character with a challenge,
    a lost Trait, a presence or a mob scene in it, and ``nobody``: those of
    any other character. ``(None, {})`` if the session does not exist."""
    nobody, rows = _play_rows(session_id)
    if nobody is None:
        return None, {}
    return _row_parts(nobody), {pk: _row_parts(row) for pk, row in rows.items()}


SNAPSHOT_SECONDS = 2.0
"""Longest age of a snapshot a ping may be answered from (seconds): also
how late, at most, a lost broadcast is seen beyond the ping after it."""


def now() -> float:
    """The clock of stamps and snapshots (``time.monotonic``; tests move it)."""
    return time.monotonic()


# A phone's ``combat`` / ``fight`` part for every character of a session (one
# query): the newest combats she is in, at most ``shown``, as combat_part.
_COMBATS_SQL = """
SELECT r.character_id, COUNT(*), SUM(r.version) FROM (
  SELECT p.character_id, c.version, ROW_NUMBER() OVER (
      PARTITION BY p.character_id ORDER BY c.created_at DESC, c.id DESC) AS r
  FROM {combat} c JOIN {people} p ON p.{column} = c.id
  WHERE c.session_id = %(session)s) r
WHERE r.r <= {shown} GROUP BY r.character_id
"""

# A phone's ``roll`` part for every character of a session (one query): the
# rolls she makes or is the opponent of (once if both), as rolls_part.
_ROLLS_SQL = """
SELECT z.who, COUNT(*), SUM(z.version), MAX(z.id) FROM (
  SELECT character_id AS who, id, version FROM {roll}
  WHERE session_id = %(session)s AND character_id IS NOT NULL
  UNION ALL
  SELECT opponent_id, id, version FROM {roll}
  WHERE session_id = %(session)s AND opponent_id IS NOT NULL
    AND (character_id IS NULL OR opponent_id <> character_id)
) z GROUP BY z.who
"""

EXTRA_PARTS = ("combat", "roll", "fight")
"""The parts only some rulesets' phones have (``bns``: ``combat``;
``storytelling``: ``roll`` and ``fight``), which a :class:`Snapshot` reads
when a ping asks for them."""

_EXTRA_NONE = {"combat": (0, 0), "roll": (0, 0, 0), "fight": (0, 0)}


def _combats_by_character(session_id: int, model, shown: int) -> dict[int, tuple[int, ...]]:
    through = model.participants.through
    sql = _COMBATS_SQL.format(
        combat=model._meta.db_table,
        people=through._meta.db_table,
        column=through._meta.get_field(model._meta.model_name).column,
        shown=shown,
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, {"session": session_id})
        return {row[0]: (int(row[1]), int(row[2])) for row in cursor.fetchall()}


def _rolls_by_character(session_id: int) -> dict[int, tuple[int, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(_ROLLS_SQL.format(roll=DiceRoll._meta.db_table), {"session": session_id})
        return {row[0]: tuple(int(v) for v in row[1:]) for row in cursor.fetchall()}


def session_extra_parts(session_id: int, kinds: tuple[str, ...]) -> dict[str, dict[int, tuple]]:
    """``{kind: {character id: part}}`` for each of ``kinds`` (of
    :data:`EXTRA_PARTS`): the part :func:`combat_part`, :func:`rolls_part` or
    :func:`fight_part` gives her phone, for every character that has a
    combat, roll or fight in the session (one query per kind; a character
    without one has zeros). Raises ``ValueError`` for an unknown kind."""
    readers = {
        "combat": lambda: _combats_by_character(session_id, Combat, COMBATS_SHOWN),
        "roll": lambda: _rolls_by_character(session_id),
        "fight": lambda: _combats_by_character(session_id, StoryCombat, FIGHTS_SHOWN),
    }
    unknown = set(kinds) - set(readers)
    if unknown:
        raise ValueError(f"No such heartbeat part: {sorted(unknown)}")
    return {kind: readers[kind]() for kind in kinds}


@dataclass(frozen=True)
class Snapshot:
    """Every phone's parts of one session, read by a query that started
    after ``taken`` (:func:`now`): ``rows`` ``{character id: row of
    _PLAYS_SQL}`` and ``nobody`` (the row of a character without one;
    None: the session was not found), made into parts by :meth:`parts_of`;
    ``extra``: :func:`session_extra_parts` of the kinds it was read with."""

    taken: float
    nobody: tuple | None
    rows: dict[int, tuple]
    extra: dict[str, dict[int, tuple]] = field(default_factory=dict)

    def parts_of(self, character_id: int) -> Parts | None:
        """Her parts (as :func:`play_parts`, with the ``extra`` kinds as
        :func:`combat_part` and the like); None if the session was not found."""
        if self.nobody is None:
            return None
        parts = _row_parts(self.rows.get(character_id, self.nobody))
        for kind, by_character in self.extra.items():
            parts[kind] = by_character.get(character_id, _EXTRA_NONE[kind])
        return parts


class Snapshots:
    """This worker's latest :class:`Snapshot` per session, read again when a
    ping finds it older than :data:`SNAPSHOT_SECONDS`; pings arriving while it
    is read share that one read. Nothing here is trusted beyond its age: a
    change made by any worker is in every snapshot read after its commit."""

    #: A session's snapshot is forgotten when no ping asked for it this long (seconds).
    FORGET_SECONDS = 60.0

    def __init__(self) -> None:
        self.latest: dict[tuple[int, tuple[str, ...]], Snapshot] = {}
        self._reading: dict[tuple[int, tuple[str, ...]], asyncio.Future] = {}

    def clear(self) -> None:
        """Forget every snapshot (tests: a new database reuses session ids)."""
        self.latest.clear()
        self._reading.clear()

    async def parts(
        self, session_id: int, character_id: int, since: float, kinds: tuple[str, ...] = ()
    ) -> Parts | None:
        """Her parts in a snapshot of the session at most ``SNAPSHOT_SECONDS``
        old (read now, one query on the database thread, one more per kind of
        ``kinds``, if the latest is older) and read after ``since``
        (:func:`now` when her screen's stamp was set); ``kinds``: the
        :data:`EXTRA_PARTS` her screen has (her chronicle's ruleset's). None
        if there is none such (then check exactly), or if she is not a
        character of the session's chronicle."""
        key = (session_id, kinds)
        snapshot = self.latest.get(key)
        if snapshot is None or now() - snapshot.taken > SNAPSHOT_SECONDS:
            snapshot = await self._read(key)
        if snapshot is None or snapshot.taken <= since:
            return None
        return snapshot.parts_of(character_id)

    async def _read(self, key: tuple[int, tuple[str, ...]]) -> Snapshot | None:
        loop = asyncio.get_running_loop()
        reading = self._reading.get(key)
        if reading is None or reading.get_loop() is not loop:
            reading = loop.create_task(self._query(key))
            self._reading[key] = reading
        # Shielded: a ping whose socket closes meanwhile does not cancel the others' read.
        return await asyncio.shield(reading)

    async def _query(self, key: tuple[int, tuple[str, ...]]) -> Snapshot | None:
        session_id, kinds = key
        taken = now()

        def read() -> tuple[tuple | None, dict[int, tuple], dict[str, dict[int, tuple]]]:
            nobody, rows = _play_rows(session_id)
            return nobody, rows, session_extra_parts(session_id, kinds)

        try:
            nobody, rows, extra = await database_sync_to_async(read)()
        except Exception:  # noqa: BLE001 - the exact check answers instead
            log.exception("snapshot of session %s failed", session_id)
            return None
        finally:
            self._reading.pop(key, None)
        snapshot = Snapshot(taken, nobody, rows, extra)
        self.latest = {
            other: old
            for other, old in self.latest.items()
            if taken - old.taken < self.FORGET_SECONDS and other != key
        }
        self.latest[key] = snapshot
        return snapshot


phones = Snapshots()
"""This worker's snapshots of phones' parts (:meth:`Snapshots.parts`)."""


def mob_part(mobs) -> tuple[int, int]:
    """The ``mob`` part of the mob scenes a screen shows (views with ``version``)."""
    return (len(mobs), sum(m.version for m in mobs))


def roster_part(rows: dict[int, tuple[int, int, int]]) -> tuple[int, int, int, int]:
    """The ``roster`` part of the roster rows a dashboard shows,
    ``{id: (health, lost, on a break 0/1)}``."""
    return (
        len(rows),
        sum(health for health, _, _ in rows.values()),
        sum(lost for _, lost, _ in rows.values()),
        sum(on_break for _, _, on_break in rows.values()),
    )


class Tally:
    """The rows a screen shows, ``{id: entry}`` (each entry a tuple of
    ``width`` integers), with the sums of their entries kept up to date as
    rows are set and taken away (the old entry subtracted, the new one
    added), so a part costs O(1) instead of a pass over every row: a
    dashboard's roster of 1,500 was summed on every change it showed.

    ``Tally(3, {7: (4, 1, 0)})``; ``tally[7] = (3, 2, 0)``; ``tally.pop(7)``;
    ``tally.get(7)``; ``7 in tally``; ``len(tally)``. :attr:`sums` is a tuple
    of ``width`` integers, :attr:`max_id` the highest id (0: none), found
    again by one pass only when the highest row goes. Raises ValueError for
    an entry of another width."""

    def __init__(self, width: int, rows: dict[int, tuple[int, ...]] | None = None) -> None:
        self.width = width
        self.rows: dict[int, tuple[int, ...]] = {}
        self._sums = [0] * width
        self.max_id = 0
        for pk, entry in (rows or {}).items():
            self[pk] = entry

    def __setitem__(self, pk: int, entry: tuple[int, ...]) -> None:
        if len(entry) != self.width:
            raise ValueError(f"an entry of {len(entry)} integers in a tally of {self.width}")
        old = self.rows.get(pk)
        sums = self._sums
        for i, value in enumerate(entry):
            sums[i] += value - (old[i] if old is not None else 0)
        self.rows[pk] = entry
        if pk > self.max_id:
            self.max_id = pk

    def pop(self, pk: int, default: tuple[int, ...] | None = None) -> tuple[int, ...] | None:
        """Take row ``pk`` away; its entry, or ``default`` if it was not there."""
        old = self.rows.pop(pk, None)
        if old is None:
            return default
        for i, value in enumerate(old):
            self._sums[i] -= value
        if pk == self.max_id:
            self.max_id = max(self.rows, default=0)
        return old

    def get(self, pk: int, default: tuple[int, ...] | None = None) -> tuple[int, ...] | None:
        return self.rows.get(pk, default)

    def __contains__(self, pk: object) -> bool:
        return pk in self.rows

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def sums(self) -> tuple[int, ...]:
        return tuple(self._sums)


def challenges_tally_part(shown: Tally) -> tuple[int, int, int]:
    """The ``challenges`` part of a :class:`Tally` of ``{id: (version,)}``:
    equal to :func:`aggregate` of the same versions, without a pass over them."""
    return (len(shown), shown.sums[0], shown.max_id)


def roster_tally_part(shown: Tally) -> tuple[int, int, int, int]:
    """The ``roster`` part of a :class:`Tally` of ``{id: (health, lost, on a
    break)}``: equal to :func:`roster_part` of the same rows, without a pass."""
    health, lost, on_break = shown.sums
    return (len(shown), health, lost, on_break)


_COMBAT_SQL = """
SELECT COUNT(*), COALESCE(SUM(x.version), 0) FROM (
  SELECT c.version FROM {combat} c WHERE c.session_id = %(session)s{mine}
  ORDER BY c.created_at DESC, c.id DESC LIMIT {shown}) x
"""


def combat_part(
    session_id: int, character_id: int | None = None, *, model=Combat, shown: int = COMBATS_SHOWN
) -> tuple[int, ...]:
    """The ``combat`` part read from the database (one query): the combats of
    the session a screen shows (``character_id``'s on her phone). ``model``
    and ``shown``: a Storytelling fight's (:func:`fight_part`)."""
    through = model.participants.through
    people = through._meta.db_table
    column = through._meta.get_field(model._meta.model_name).column
    mine = (
        ""
        if character_id is None
        else f" AND c.id IN (SELECT {column} FROM {people} WHERE character_id = %(character)s)"
    )
    sql = _COMBAT_SQL.format(combat=model._meta.db_table, mine=mine, shown=shown)
    with connection.cursor() as cursor:
        cursor.execute(sql, {"session": session_id, "character": character_id})
        row = cursor.fetchone()
    return tuple(int(v) for v in row)


def combats_shown_part(combats) -> tuple[int, int]:
    """The ``combat`` part of the combats a screen shows (views with ``version``)."""
    return mob_part(combats)


def rolls_part(
    session_id: int, character_id: int | None = None, *, shown: int | None = None
) -> tuple[int, int, int]:
    """The ``roll`` part (issue 13, storytelling rolls) read from the database
    (one query; two on a dashboard): the session's rolls (hers, as roller or opponent, on her
    phone; on a dashboard its list, :func:`listed_rolls` with ``shown``,
    ``views.ROLLS_SHOWN``):
    count, sum of ``DiceRoll.version``, highest id, as
    :func:`challenges_tally_part` gives of a :class:`Tally` of the rolls a
    screen shows. Only screens of a chronicle that rolls dice pools ask for it."""
    rows = DiceRoll.objects.filter(session_id=session_id)
    if character_id is not None:
        rows = rows.filter(Q(character_id=character_id) | Q(opponent_id=character_id))
    pairs = rows.values_list("pk", "version")
    if shown is None:
        versions = dict(pairs)
    else:
        versions = {pk: v for listed in listed_rolls(pairs, shown) for pk, v in listed}
    return (len(versions), sum(versions.values()), max(versions, default=0))


def fight_part(session_id: int, character_id: int | None = None) -> tuple[int, ...]:
    """Issue 13: the ``fight`` part of a screen of a chronicle that rolls
    dice pools (one query; none is asked for other chronicles): the
    Storytelling fights it shows (count, sum of ``StoryCombat.version``)."""
    return combat_part(session_id, character_id, model=StoryCombat, shown=FIGHTS_SHOWN)
