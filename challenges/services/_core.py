"""What every move of :mod:`challenges.services` shares: its errors, the
claim of the client's message id, the locks, the checks of who may act, and
the plain-SQL helpers of its reads."""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from typing import Any

from django.db import IntegrityError, connection
from django.utils import timezone

from challenges.models import Challenge, ClientAction, TraitLoss
from challenges.rules import Stage
from characters.models import Character, Chronicle, GameSession, Presence, Trait

MAX_BIDS = 5  # Traits in one bid; far above any rule's need, a guard against forged input.
MAX_STAKES = 300  # characters of "what happens on a win"


class ActionRefused(Exception):
    """A move refused for a reason outside the rules: time out, not your
    character, not present, unknown challenge. ``str()`` is for the player."""


class AlreadyDone(Exception):
    """The client's message id was applied before; nothing was changed."""


def _now() -> float:
    return time.time()


def _claim(user, msg_id: str, action: str) -> None:
    """Record the client's message id; run first inside the move's transaction.

    No savepoint of its own: a repeat raises AlreadyDone out of the move's
    ``atomic`` block, which rolls the whole move back (on PostgreSQL the failed
    insert has aborted the transaction, and nothing may run in it afterwards).
    """
    if not msg_id or len(msg_id) > 64:
        raise ActionRefused("This action has no valid id.")
    try:
        # One plain INSERT: building the ORM's cost five times running it.
        _insert(
            ClientAction,
            [{"user": user.pk, "msg_id": msg_id, "action": action, "created_at": timezone.now()}],
        )
    except IntegrityError:
        raise AlreadyDone(msg_id) from None


def _check_session(ended_at, time_out, *, for_play: bool) -> None:
    """ActionRefused if a session that ended at ``ended_at`` (None: open) is
    over, or (``for_play``) in a time out."""
    if ended_at is not None:
        raise ActionRefused("This session is over.")
    if for_play and time_out:
        raise ActionRefused("Time out! A narrator has stopped play; wait for Resume.")


def _share_session(where: str, key: int) -> None:
    """On PostgreSQL, hold the session row FOR SHARE (``where`` picks it, with
    ``key`` as its one parameter): moves run side by side, but a time out (FOR
    UPDATE) waits for moves in flight and later moves see it, so nothing
    resolves after a time out is committed. SQLite serializes writers: no query."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT 1 FROM {GameSession._meta.db_table} WHERE {where} FOR SHARE", [key]
            )


def _lock_session(session_id: int, *, for_play: bool) -> GameSession:
    """Read the session (with its chronicle) inside the current transaction,
    FOR SHARE on PostgreSQL (:func:`_share_session`). Raises
    GameSession.DoesNotExist if there is none, ActionRefused if it is over or
    (``for_play``) in a time out."""
    _share_session("id = %s", session_id)
    session = GameSession.objects.select_related("chronicle").get(pk=session_id)
    _check_session(session.ended_at, session.time_out, for_play=for_play)
    return session


def _lock_session_ruleset(session_id: int, *, for_play: bool) -> GameSession:
    """:func:`_lock_session` for a move that reads nothing of the chronicle
    but its ruleset: the session row with ``chronicle_ruleset`` (its
    chronicle's ruleset name; ``chronicle`` itself is not loaded) in one
    plain query, a third of the queryset's CPU. Raises as
    :func:`_lock_session`."""
    _share_session("id = %s", session_id)
    chronicle = Chronicle._meta.db_table
    found = list(
        GameSession.objects.raw(
            f"SELECT s.*, (SELECT r.ruleset FROM {chronicle} r WHERE r.id = s.chronicle_id) "
            f"AS chronicle_ruleset FROM {GameSession._meta.db_table} s WHERE s.id = %s",
            [session_id],
        )
    )
    if not found:
        raise GameSession.DoesNotExist(f"No session {session_id}.")
    session = found[0]
    _check_session(session.ended_at, session.time_out, for_play=for_play)
    return session


def _lock_challenge(challenge_id: int, *, for_play: bool) -> Challenge:
    """Read the challenge (FOR UPDATE on PostgreSQL) with its session's state
    (FOR SHARE first, see :func:`_share_session`) in one plain query: the
    challenge has every field (converted as the ORM converts them, see
    :func:`_from_row`), and ``session_ended_at``, ``session_time_out``,
    ``session_chronicle_id``, ``challenger_npc``, ``defender_npc`` as the
    database returns them (its ``session`` is not loaded). Raises
    ActionRefused if there is no such challenge, the session is over, or
    (``for_play``) it is in a time out."""
    _share_session(f"id = (SELECT session_id FROM {_CHALLENGE} WHERE id = %s)", challenge_id)
    lock = " FOR UPDATE OF c" if connection.features.has_select_for_update else ""
    columns = ", ".join(f"c.{column}" for column in _row_reader(Challenge)[1])
    found = _rows(
        f"SELECT {columns}, s.ended_at, s.time_out, s.chronicle_id, {_NPC_COLUMNS} "
        f"FROM {_CHALLENGE} c JOIN {GameSession._meta.db_table} s ON s.id = c.session_id "
        f"WHERE c.id = %s{lock}",
        [challenge_id],
    )
    if not found:
        raise ActionRefused("There is no such challenge.")
    row = found[0]
    challenge = _from_row(Challenge, row)
    extra = row[len(row) - 5 :]
    challenge.session_ended_at, challenge.session_time_out, challenge.session_chronicle_id = extra[
        :3
    ]
    challenge.challenger_npc, challenge.defender_npc = extra[3:]
    _check_session(challenge.session_ended_at, challenge.session_time_out, for_play=for_play)
    return challenge


@functools.cache
def _row_reader(model) -> tuple[list[str], list[str], list]:
    """For :func:`_from_row`: ``model``'s concrete fields' attribute names,
    quoted columns, and ``(column expression, converters)`` per field as the
    ORM's compiler gathers them (backend's, then the field's)."""
    fields = model._meta.concrete_fields
    cols = [f.get_col(model._meta.db_table) for f in fields]
    converters = [
        (col, connection.ops.get_db_converters(col) + col.get_db_converters(connection))
        for col in cols
    ]
    quote = connection.ops.quote_name
    return [f.attname for f in fields], [quote(f.column) for f in fields], converters


def _from_row(model, row: Sequence) -> Any:
    """A ``model`` instance from a plain row whose first values are its
    concrete fields in :func:`_row_reader` order, converted as the ORM
    converts a queryset's (JSON decoded, SQLite's datetimes and booleans):
    what ``Model.objects.raw`` builds, for a tenth of its CPU."""
    names, _, converters = _row_reader(model)
    values = []
    for value, (col, functions) in zip(row, converters, strict=False):
        for function in functions:
            value = function(value, col, connection)
        values.append(value)
    return model.from_db(connection.alias, names, values)


# Issue 11 section 4 (NPCs): each side's "relents" setting when it is an
# auto-answering NPC (no player, auto-answer on), else NULL, read with the
# challenge row at no extra query (services.npcs.npc_sides).
_NPC_COLUMNS = ", ".join(
    f"(SELECT n.relents FROM {Character._meta.db_table} n WHERE n.id = c.{side}_id "
    f"AND n.player_id IS NULL AND n.auto_answer) AS {side}_npc"
    for side in ("challenger", "defender")
)


def _lock_characters(*ids: int | None) -> None:
    """Hold the rows of the characters ``ids`` (None: no one, e.g. the narrator's
    side) FOR NO KEY UPDATE, in id order, until the move
    commits. A character's free Trait copies are read from her other open
    challenges (``combatant``), so two moves of one character must not both
    read them before either commits: two answers bidding her last copy at the
    same instant would both stand. Waits, in order, behind the session and
    challenge locks. No-op on SQLite (one writer at a time): no query."""
    if not connection.features.has_select_for_update:
        return
    list(
        Character.objects.select_for_update(no_key=True)
        .filter(pk__in=sorted({pk for pk in ids if pk is not None}))
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def _ensure_player(user, character: Character) -> None:
    """ActionRefused unless ``user`` plays ``character``, or ``character`` has
    no player (an NPC) and ``user`` narrates its chronicle (issue 11 section
    4: a narrator may act as any character with no player in her chronicle;
    one query then, none for a player's own character)."""
    if character.player_id is not None and character.player_id == user.pk:
        return
    if character.player_id is None and _narrates(user, character.chronicle_id):
        return
    raise ActionRefused("You can only act for your own character.")


def _narrates(user, chronicle_id: int) -> bool:
    """``user`` narrates the chronicle ``chronicle_id`` (or is a superuser)."""
    if not getattr(user, "is_authenticated", False):
        return False
    if user.is_superuser:
        return True
    return Chronicle.narrators.through.objects.filter(
        chronicle_id=chronicle_id, user_id=user.pk
    ).exists()


def _ensure_narrator(user, chronicle: Chronicle) -> None:
    if not chronicle.is_narrator(user):
        raise ActionRefused("Only this chronicle's narrators can do that.")


# The reads of a move's characters are plain SQL (standard, for SQLite and
# PostgreSQL alike): compiling their querysets cost ten times running them.
_PRESENCE = Presence._meta.db_table
_CHALLENGE = Challenge._meta.db_table
_TRAIT = Trait._meta.db_table
_TRAIT_LOSS = TraitLoss._meta.db_table
_OPEN_STAGES = tuple(stage.value for stage in Stage if stage is not Stage.RESOLVED)


def _rows(sql: str, params: Sequence) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _columns(model, names: Sequence[str]) -> tuple[list, str]:
    """The fields ``names`` of ``model`` and their quoted columns, comma-separated."""
    fields = [model._meta.get_field(name) for name in names]
    return fields, ", ".join(connection.ops.quote_name(f.column) for f in fields)


def _insert(model, rows: Sequence[dict[str, Any]]) -> None:
    """INSERT ``rows`` (``{field name: value}``, every row with the same
    fields, a foreign key given by its id) into ``model``'s table in one plain
    statement, each value prepared for the database as the ORM prepares it
    (``Field.get_db_prep_save``: JSON, aware datetimes). No model instance,
    no signal, no default filled in (give every column that has no database
    default, ``created_at`` too). Raises IntegrityError as the ORM does."""
    if not rows:
        return
    fields, columns = _columns(model, list(rows[0]))
    one = f"({_marks(fields)})"
    params = [f.get_db_prep_save(row[f.name], connection) for row in rows for f in fields]
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {model._meta.db_table} ({columns}) VALUES {', '.join([one] * len(rows))}",
            params,
        )


def _update(model, where: dict[str, Any], values: dict[str, Any]) -> int:
    """UPDATE ``model``'s rows matching every ``{field name: value}`` of
    ``where`` to ``values`` in one plain statement, values prepared as
    :func:`_insert` prepares them. Returns the number of rows updated."""
    fields, _ = _columns(model, list(values))
    keys, _ = _columns(model, list(where))
    quote = connection.ops.quote_name
    sets = ", ".join(f"{quote(f.column)} = %s" for f in fields)
    match = " AND ".join(f"{quote(f.column)} = %s" for f in keys)
    params = [f.get_db_prep_save(values[f.name], connection) for f in fields]
    params += [f.get_db_prep_save(where[f.name], connection) for f in keys]
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {model._meta.db_table} SET {sets} WHERE {match}", params)
        return cursor.rowcount


def _marks(values: Sequence) -> str:
    """``%s, %s, …``: one placeholder per value."""
    return ", ".join(["%s"] * len(values))


def _parse(enum: type, value: str, message: str):
    try:
        return enum(value)
    except ValueError:
        raise ActionRefused(message) from None


def _clean_bids(bids: Sequence[str] | None) -> list[str]:
    if bids is None:
        return []
    if isinstance(bids, str):
        bids = [bids]
    if len(bids) > MAX_BIDS or not all(isinstance(b, str) and 0 < len(b) <= 100 for b in bids):
        raise ActionRefused("That is not a valid bid.")
    return list(bids)
