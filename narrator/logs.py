"""Logging for expected refusals.

A 403 (``PermissionDenied``) or a 404 (``Http404``) is the app answering as
designed: an expired join link, a phone asking for someone else's character.
Django's ``django.request`` logger writes each with its traceback; this filter
keeps the record (one line: "Forbidden (Permission denied): /accounts/join/")
and drops the traceback. Real errors (500) keep theirs.
"""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied
from django.http import Http404

EXPECTED = (PermissionDenied, Http404)


class OneLineRefusals(logging.Filter):
    """Strip the traceback from ``django.request`` records of a 403 or a 404."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, EXPECTED):
            record.exc_info = None
            record.exc_text = None
        return True
