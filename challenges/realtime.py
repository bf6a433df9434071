"""Group names, event types and the one way to broadcast: after commit, ids only.

A broadcast never carries game state, only "this changed" with ids; every
connection re-reads the database and renders its own view, so a hidden throw
never travels to anyone but its owner (seeds/000 "The Test": neither side may
see the other's throw before both are committed).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

log = logging.getLogger(__name__)

CHALLENGE_UPDATED = "challenge.updated"  # {"challenge_id", "session_id", "version"}
SESSION_UPDATED = "session.updated"  # {"session_id", "time_out"?}: time out, resume, ended
# {"character_id", "session_id", "challenge_id"?, "version"?}: sheet changed (by that challenge)
CHARACTER_UPDATED = "character.updated"


def character_group(character_id: int) -> str:
    """Every phone of one character."""
    return f"character.{character_id}"


def narrators_group(session_id: int) -> str:
    """Every narrator dashboard of one session."""
    return f"narrators.{session_id}"


def session_group(session_id: int) -> str:
    """Every connection (phones and dashboards) of one session."""
    return f"session.{session_id}"


async def _send_each(layer, groups: list[str], message: dict) -> None:
    for group in groups:
        try:
            await layer.group_send(group, message)
        except Exception:  # noqa: BLE001 - logged; clients resync on heartbeat
            log.exception("broadcast to %s failed", group)


def broadcast(groups: Iterable[str], event_type: str, **ids: int | bool) -> None:
    """Send ``{"type": event_type, **ids}`` to each group now (sync code only),
    in one trip to the event loop for all of them (each trip costs a worker
    thread a wake-up of the loop and a wait for it).

    A failing channel layer must not undo a committed move: the phones resync
    on their heartbeat, so the error is logged (per group), not raised.
    """
    layer = get_channel_layer()
    groups = list(dict.fromkeys(groups))
    try:
        async_to_sync(_send_each)(layer, groups, {"type": event_type, **ids})
    except Exception:  # noqa: BLE001 - logged; clients resync on heartbeat
        log.exception("broadcast to %s failed", ", ".join(groups))


def broadcast_on_commit(groups: Iterable[str], event_type: str, **ids: int | bool) -> None:
    """Broadcast once the current transaction commits (immediately if none)."""
    groups = list(groups)
    transaction.on_commit(lambda: broadcast(groups, event_type, **ids))
