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
on the next connect. A socket open meanwhile is told whenever its user's
rights may have changed (``challenges.rights``) and checks with
:func:`user_now`. Reading ``scope["user"]`` before
:func:`resolve_user` raises ``ValueError`` (Channels' ``UserLazyObject``): a
consumer that forgets to resolve fails closed.
"""

from __future__ import annotations

from importlib import import_module
from types import SimpleNamespace

from channels.auth import AuthMiddleware, UserLazyObject
from channels.sessions import CookieMiddleware, SessionMiddleware
from django.conf import settings
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


def user_now(scope: dict):
    """The user ``scope``'s Django session logs in now, read again from its
    store (not the copy loaded on connect), or None: the session was deleted
    (a logout, a join-link revocation), expired, lost its session hash (a
    password change), or its user is gone or inactive (Django's backends
    refuse an inactive user), or it names another user than
    :func:`resolve_user` found. On success ``scope["user"]`` becomes that
    fresh user, so a socket's later actions see her rights as they are now
    (a superuser flag taken away, for one).

    Synchronous: reads the database (the session row, the user row), like
    :func:`resolve_user`, which must have run first (else ``ValueError``, as
    for an unresolved ``scope["user"]``)."""
    engine = import_module(settings.SESSION_ENGINE)
    fresh = engine.SessionStore(scope["session"].session_key)
    user = auth.get_user(SimpleNamespace(session=fresh))
    if not user.is_authenticated or user.pk != scope["user"].pk:
        return None
    scope["user"]._wrapped = user
    return user
