"""Seats: who may connect where. A player's phone seat (her character and its
chronicle's open session, marking her present), a narrator's session, and a
character of a session's chronicle for a narrator's action. Shared by the HTTP
pages and the websocket consumers; renders nothing."""

from __future__ import annotations

import functools

from django.db import connection

from challenges.realtime import CHARACTER_UPDATED, broadcast_on_commit, narrators_group
from characters.models import Character, Chronicle, GameSession, Presence


# Seats: who may connect where ---------------------------------------------
@functools.cache
def sql_column(meta, name: str) -> str:
    """The quoted database column of field ``name`` of a model's ``meta``, for
    queries written out in plain SQL (names still come from the models)."""
    return connection.ops.quote_name(meta.get_field(name).column)


def sql_table(meta) -> str:
    """The quoted database table of a model's ``meta``."""
    return connection.ops.quote_name(meta.db_table)


@functools.cache
def _seat_sql() -> tuple[str, str]:
    """The two queries of :func:`player_seat`, written out: building them with the
    ORM (an ``Exists`` annotation) cost ~1 ms of CPU per reconnect, ten times
    running them. Column names come from the models; each model's columns in
    ``services._core._row_reader``'s order, for ``_from_row``."""
    from challenges.services._core import _row_reader

    character, session, presence = Character._meta, GameSession._meta, Presence._meta
    chronicle = Chronicle._meta

    col, table = sql_column, sql_table
    mine = (
        f"SELECT {', '.join(_row_reader(Character)[1])} FROM {table(character)} "
        f"WHERE {col(character, 'id')} = %s AND {col(character, 'player')} = %s"
    )
    # Chronicle.open_session(), whether she is present there, and the chronicle's
    # ruleset (the phone's "Challenge someone" form reads its rule options).
    session_columns = ", ".join(f"s.{c}" for c in _row_reader(GameSession)[1])
    open_session = (
        f"SELECT {session_columns}, "
        f"(SELECT r.{col(chronicle, 'ruleset')} FROM {table(chronicle)} r "
        f"WHERE r.{col(chronicle, 'id')} = s.{col(session, 'chronicle')}) AS chronicle_ruleset, "
        f"EXISTS (SELECT 1 FROM {table(presence)} p "
        f"WHERE p.{col(presence, 'session')} = s.{col(session, 'id')} "
        f"AND p.{col(presence, 'character')} = %s "
        f"AND p.{col(presence, 'status')} <> '{Presence.Status.ABSENT.value}') AS seated "
        f"FROM {table(session)} s "
        f"WHERE s.{col(session, 'chronicle')} = %s AND s.{col(session, 'ended_at')} IS NULL "
        f"ORDER BY s.{col(session, 'started_at')} DESC LIMIT 1"
    )
    return mine, open_session


def player_seat(user, character_id: int) -> tuple[Character, GameSession | None] | None:
    """``user``'s character and its chronicle's open session; marks her present
    (again, if a narrator had marked her absent). None if the character is not
    hers. Two queries when she is already present (a phone reconnecting), a
    few more on her arrival. The session carries ``chronicle_ruleset`` (its
    chronicle's ruleset) and ``seated`` (she was present before this call).
    Rows are built with ``services._core._from_row`` (the ORM's converters),
    not ``objects.raw`` (issue 14: a reconnect storm runs this 1,500 times)."""
    from challenges.services._core import _from_row, _rows

    mine, open_session = _seat_sql()
    found = _rows(mine, [int(character_id), user.pk])
    character = _from_row(Character, found[0]) if found else npc_seat(user, character_id)
    if character is None:
        return None
    session = None
    if rows := _rows(open_session, [character.pk, character.chronicle_id]):
        row = rows[0]
        session = _from_row(GameSession, row[:-2])
        session.chronicle_ruleset, session.seated = row[-2], bool(row[-1])
    if session is not None and not session.seated:
        presence, arrived = Presence.objects.get_or_create(
            session=session, character=character, defaults={"health": character.health}
        )
        # Marked absent by a narrator, she opens her phone: she is back.
        if not arrived and presence.status == Presence.Status.ABSENT:
            Presence.objects.filter(pk=presence.pk).update(status=Presence.Status.PRESENT)
            arrived = True
        if arrived:
            broadcast_on_commit(
                [narrators_group(session.pk)],
                CHARACTER_UPDATED,
                character_id=character.pk,
                session_id=session.pk,
            )
    return character, session


def seat_held(user, character_id: int) -> bool:
    """True if ``user`` may still open the phone of character
    ``character_id``: she plays it, or it is an NPC of a chronicle she
    narrates (:func:`npc_seat`). What :func:`player_seat` checks, without
    marking her present. One query, or three for an NPC."""
    if Character.objects.filter(pk=int(character_id), player_id=user.pk).exists():
        return True
    return npc_seat(user, character_id) is not None


def npc_seat(user, character_id: int) -> Character | None:
    """Issue 11 section 4: the character ``character_id`` if it has no player
    (an NPC) and ``user`` narrates its chronicle (or is a superuser), so that
    a narrator plays it from the same phone screen a player has; else None.
    Two queries (only when ``user`` does not play the character herself)."""
    from challenges.services._core import _narrates

    character = Character.objects.filter(pk=int(character_id), player__isnull=True).first()
    if character is None or not _narrates(user, character.chronicle_id):
        return None
    return character


def narrated_session(user, session_id: int) -> GameSession | None:
    """The session if ``user`` narrates its chronicle, else None."""
    session = GameSession.objects.select_related("chronicle").filter(pk=session_id).first()
    if session is None or not session.chronicle.is_narrator(user):
        return None
    return session


def character_in_session(session: GameSession, character_id: int) -> Character:
    """A character of ``session``'s chronicle; ActionRefused if there is none."""
    from challenges.services import ActionRefused
    from challenges.services._core import _from_row, _row_reader, _rows

    # Plain SQL, built into a model as the ORM would: the queryset's building
    # cost three times running it, ``objects.raw`` six (issue 14).
    meta, col = Character._meta, sql_column
    _, columns, _ = _row_reader(Character)
    found = _rows(
        f"SELECT {', '.join(columns)} FROM {sql_table(meta)} "
        f"WHERE {col(meta, 'id')} = %s AND {col(meta, 'chronicle')} = %s",
        [int(character_id), session.chronicle_id],
    )
    if not found:
        raise ActionRefused("There is no such character in this chronicle.")
    return _from_row(Character, found[0])
