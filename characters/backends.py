"""Join links (django-sesame tokens) that a narrator can revoke.

django-sesame tokens expire (``SESAME_MAX_AGE``) and die when the password
changes, but a player who only ever uses her link has no password to change.
This backend adds a per-user revocation time (``JoinLinkRevocation``): a token
is accepted only if it is younger than the time since the last revocation. The
token's own timestamp (whole seconds) does the work, so nothing is stored per
link; a link made in the same second as a revocation is refused too.

Tokens are only ever read by the HTTP join view (``/accounts/join/``, scope
"join"): sesame's middleware is not installed and websockets authenticate by
session cookie alone.
"""

from __future__ import annotations

import time

from django.conf import settings
from sesame.backends import ModelBackend

from characters.models import JoinLinkRevocation


class JoinLinkBackend(ModelBackend):
    """sesame's backend, refusing tokens issued before the user's last revocation."""

    def authenticate(self, request, sesame, scope="", max_age=None):
        user = super().authenticate(request, sesame, scope, max_age)
        if user is None:
            return None
        revoked = JoinLinkRevocation.objects.filter(user=user).first()
        if revoked is None:
            return user
        # Whole seconds, as in the token: a token of the revocation's second is refused.
        since = int(time.time()) - int(revoked.revoked_at.timestamp())
        limit = settings.SESAME_MAX_AGE if max_age is None else max_age
        return super().authenticate(request, sesame, scope, max(0, min(limit, since)))
