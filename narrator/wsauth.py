"""Websocket authentication resolved by the consumer, after ``accept``.

Channels' ``AuthMiddlewareStack`` looks the user up (the Django session row,
then the user row) on the database thread *before* the consumer runs. In a
reconnect storm that thread is busy rendering views, so handshakes wait behind
them until Daphne drops them (its handshake timeout), and every connection pays
one more hop to that thread. Here the middleware only puts a placeholder in
``scope["user"]``; the consumer calls :func:`resolve_user` in the same database
call that finds what it serves (a phone's seat, a narrator's session).

The checks are Django's own (``django.contrib.auth.get_user``): the session must
exist and not be expired, name a backend in ``AUTHENTICATION_BACKENDS``, and
carry the user's current session hash (a password change logs her out). They
run on every (re)connect, so a session ended by a logout, by
``characters.services.join_links_revoke`` or by any other process stops working
on the next connect. Reading ``scope["user"]`` before :func:`resolve_user` raises
``ValueError`` (Channels' ``UserLazyObject``): a consumer that forgets to resolve
fails closed.
"""

from __future__ import annotations

from types import SimpleNamespace

from channels.auth import AuthMiddleware, UserLazyObject
from channels.sessions import CookieMiddleware, SessionMiddleware
from django.contrib import auth


class DeferredAuthMiddleware(AuthMiddleware):
    """Channels' ``AuthMiddleware`` without the lookup: ``scope["user"]`` stays
    unresolved until the consumer calls :func:`resolve_user`."""

    async def resolve_scope(self, scope) -> None:
        return None


def DeferredAuthMiddlewareStack(inner):  # noqa: N802 - named like Channels' stack
    """Cookies, the (lazily loaded) Django session, and a placeholder user."""
    return CookieMiddleware(SessionMiddleware(DeferredAuthMiddleware(inner)))


def resolve_user(scope: dict):
    """The user of ``scope``'s Django session (``AnonymousUser`` if none, expired,
    ended, or with a stale session hash); also stored in ``scope["user"]``.

    Synchronous: reads the database (the session row, the user row), so call it
    on the database thread (``database_sync_to_async``). Raises ``ValueError``
    if ``scope`` did not pass through :func:`DeferredAuthMiddlewareStack`.
    """
    if "session" not in scope or not isinstance(scope.get("user"), UserLazyObject):
        raise ValueError("resolve_user needs DeferredAuthMiddlewareStack around the consumer.")
    # Django's get_user only reads request.session: give it the socket's session.
    user = auth.get_user(SimpleNamespace(session=scope["session"]))
    scope["user"]._wrapped = user
    return user
