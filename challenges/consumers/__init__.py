"""Websocket consumers: authenticate, translate one frame into one service call,
acknowledge, and render. They never call the rules engine or ``group_send``.

Client → server frames are JSON objects ``{"id": str, "action": str, ...}``
(htmx's ws extension sends a form's fields this way). Server → client frames are
either HTML fragments swapped in by id (the view) or JSON control frames:
``{"type": "ack", "id": ..., "status": "ok" | "already_done"}``,
``{"type": "error", "id": ..., "message": ...}``, ``{"type": "pong"}`` and, to a
dashboard whose session was followed by another, ``{"type": "goto", "url": ...}``.
On every (re)connect the client gets its full current view.

Every frame is checked by ``challenges.schema`` (shape) and a per-connection
``challenges.ratelimit.Limiter`` before it reaches a service. A frame beyond
the rate (``WS_RATE``, ``WS_BURST``) is refused, not closed for: an action gets
``{"type": "error", "id": ..., "message": REFUSED_MESSAGE}`` and changes
nothing; a ping or sync is answered ``OWED_HEARTBEAT_SECONDS`` later. Only a
flood (more than the rate allows even read ``WS_LATE_SECONDS`` late) is closed.

Heartbeat (``challenges.heartbeat``): every view frame starts with
``<!--v:STAMP-->``; the client pings ``{"action": "ping", "v": STAMP}`` about
every 10 seconds and gets ``pong`` when its view is current, else the full view;
``{"action": "sync"}`` always gets the full view. Both re-join the connection's
groups, because a Redis restarted empty has forgotten them. A ping whose ``v``
is not a short string (``schema.MAX_STAMP``) gets an error frame instead.

Channel layer down (Redis killed): the socket stays open. Moves still commit
(the database is the truth; their broadcasts fail and are logged), receiving
from the layer is retried with a capped backoff, and the heartbeat repairs the
view and the group memberships once the layer is back.

An unexpected exception in an action (a bug) is logged with its traceback and
answered with an error frame naming its id (``SERVER_ERROR_MESSAGE``); the move
ran in a transaction, so nothing of it is kept, and the socket stays open.

Close codes: 4401 not logged in, 4403 not allowed here, 4404 nothing to play,
4410 no longer hers (a character given away, a narrator role taken), 4429 a
flood (after one error frame, ``FLOOD_MESSAGE``). An open socket never keeps
more rights than a new one would get: every socket joins its user's group
(``user_group``) and a phone its character's (``character_group``); when the
rights behind them may have changed (``challenges.rights``: a logout, a
password change, a deactivation, join links revoked, a narrator role or a
character taken away) each reads its Django session and its seat again and
closes with 4401 or 4410 if either is gone (``docs/faults.md``, "What closes
a socket").

Connecting costs one trip to the database thread before the view: the socket
is accepted at once, then the Django session, the user and the seat are read
together (``BaseConsumer.signed_in``, ``narrator.wsauth``), on every connect.

One module per screen, each a consumer that stays a thin translation of one
frame into one service call: :mod:`~challenges.consumers.play` (a player's
phone, :class:`PlayConsumer`) and :mod:`~challenges.consumers.narrate` (a
narrator's dashboard, :class:`NarrateConsumer`), on the shared frame handling
of :mod:`~challenges.consumers.base` (:class:`BaseConsumer`). Routing
(``challenges.routing``) imports them from here.
"""

from challenges.consumers.base import (
    FLOOD_MESSAGE,
    LAYER_RETRY_SECONDS,
    REFUSED_MESSAGE,
    SERVER_ERROR_MESSAGE,
    BadMessage,
    BaseConsumer,
)
from challenges.consumers.narrate import NarrateConsumer
from challenges.consumers.play import PlayConsumer

__all__ = [
    "FLOOD_MESSAGE",
    "LAYER_RETRY_SECONDS",
    "REFUSED_MESSAGE",
    "SERVER_ERROR_MESSAGE",
    "BadMessage",
    "BaseConsumer",
    "NarrateConsumer",
    "PlayConsumer",
]
