"""Group names, event types and the one way to broadcast: after commit, ids only.

A broadcast never carries game state, only "this changed" with ids; every
connection re-reads the database and renders its own view, so a hidden throw
never travels to anyone but its owner (seeds/000 "The Test": neither side may
see the other's throw before both are committed).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

log = logging.getLogger(__name__)

CHALLENGE_UPDATED = "challenge.updated"  # {"challenge_id", "session_id", "version"}
SESSION_UPDATED = "session.updated"  # {"session_id", "time_out"?}: time out, resume, ended
# {"mob_id", "session_id", "version"}: a mob scene changed (issue 11, mob scenes)
MOB_UPDATED = "mob.updated"
# {"combat_id", "session_id", "version"}: a bns combat changed (issue 12, combat rounds)
COMBAT_UPDATED = "combat.updated"
# {"fight_id", "session_id", "version"}: a Storytelling fight changed (issue 13)
FIGHT_UPDATED = "fight.updated"
# {"character_id", "session_id", "challenge_id"?, "version"?}: sheet changed (by that challenge)
CHARACTER_UPDATED = "character.updated"
# {"chronicle_id", "session_id"}: a session started or ended; session_id is the
# chronicle's open session now, 0 when none is open.
SESSION_CHANGED = "session.changed"
# {}: the rights behind some sockets may have changed (a logout, a password
# changed, a user deactivated, a narrator role or a character taken away:
# challenges.rights), sent to a user's or a character's group; each socket
# there reads its Django session and its seat again and closes if either is
# gone (BaseConsumer.rights_changed).
RIGHTS_CHANGED = "rights.changed"
# {"session_id", "event_id"}: a health clock ran out or a character died
# (challenges.services.clocks); the session's dashboards ring and show it.
CLOCK_ALERT = "clock.alert"
# {"roll_id", "session_id", "version"}: a storytelling roll changed (issue 13,
# challenges.services.rolls): called, rolled, contested, an extended action's roll
ROLL_UPDATED = "roll.updated"


def character_group(character_id: int) -> str:
    """Every phone of one character."""
    return f"character.{character_id}"


def chronicle_group(chronicle_id: int) -> str:
    """Every phone and dashboard of one chronicle, whatever session it shows."""
    return f"chronicle.{chronicle_id}"


def narrators_group(session_id: int) -> str:
    """Every narrator dashboard of one session."""
    return f"narrators.{session_id}"


def session_group(session_id: int) -> str:
    """Every connection (phones and dashboards) of one session."""
    return f"session.{session_id}"


def user_group(user_id: int) -> str:
    """Every socket (phones and dashboards) of one user."""
    return f"user.{user_id}"


def broadcast(groups: Iterable[str], event_type: str, **ids: int | bool) -> None:
    """Send ``{"type": event_type, **ids}`` to each group now (sync code only),
    all groups in one trip to the event loop.

    A failing channel layer must not undo a committed move: the phones resync
    on their heartbeat, so the error is logged, not raised.
    """
    async_to_sync(_group_send_each)(list(dict.fromkeys(groups)), {"type": event_type, **ids})


async def _group_send_each(groups: list[str], message: dict) -> None:
    layer = get_channel_layer()
    for group in groups:
        try:
            await layer.group_send(group, message)
        except Exception:  # noqa: BLE001 - logged; clients resync on heartbeat
            layer_failed()
            log.exception("broadcast to %s failed", group)


def broadcast_on_commit(groups: Iterable[str], event_type: str, **ids: int | bool) -> None:
    """Broadcast once the current transaction commits (immediately if none).

    Inside :func:`collecting` (a websocket action) the message goes to that
    outbox instead, and the consumer sends it from the event loop when the
    action returns: no trip from the database thread to the loop per move."""
    groups = list(dict.fromkeys(groups))
    transaction.on_commit(lambda: _deliver(groups, event_type, ids))


#: How many times this process saw its channel layer fail (a group send, a
#: receive, a join): a socket re-joins its groups on the heartbeat after any
#: (``BaseConsumer.rejoin_if_due``), since a layer that failed may have come
#: back empty (Redis restarted without persistence).
_layer_failures = 0


def layer_failed() -> None:
    """Count a failure of the channel layer (:func:`layer_failures`)."""
    global _layer_failures
    _layer_failures += 1


def layer_failures() -> int:
    """How many channel-layer failures this process has seen."""
    return _layer_failures


Outbox = list[tuple[list[str], dict]]
_outbox: ContextVar[Outbox | None] = ContextVar("narrator_outbox", default=None)


def _deliver(groups: list[str], event_type: str, ids: dict) -> None:
    outbox = _outbox.get()
    if outbox is None:
        broadcast(groups, event_type, **ids)
    else:
        outbox.append((groups, {"type": event_type, **ids}))


@contextmanager
def collecting() -> Iterator[Outbox]:
    """Collect the broadcasts of the moves committed inside the block, including
    in ``database_sync_to_async`` calls made from it (they run in a copy of
    this context, which shares the list), as ``(groups, message)`` pairs, in
    commit order. Send them with :func:`send_collected`."""
    outbox: Outbox = []
    token = _outbox.set(outbox)
    try:
        yield outbox
    finally:
        _outbox.reset(token)


async def send_collected(outbox: Outbox) -> None:
    """Send what :func:`collecting` gathered (async code; errors are logged)."""
    for groups, message in outbox:
        await _group_send_each(groups, message)
