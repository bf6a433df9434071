"""The one-tap join link's landing (``/accounts/join/?token=…``)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from sesame.views import LoginView

#: What a player reads when her join link no longer works (expired, revoked,
#: mistyped or of another scope: she cannot tell them apart, nor need to).
LINK_EXPIRED = "This link has expired: ask a narrator for a new one."


class JoinView(LoginView):
    """django-sesame's login by token (scope "join", ``characters.backends``),
    refusing a bad token with a 403 page that says what to do."""

    scope = "join"

    def login_failed(self):
        raise PermissionDenied(LINK_EXPIRED)
