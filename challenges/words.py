"""Counts in words for screens and logs, the noun agreeing with the count
(``ngettext``): "1 die", "3 dice". Templates use them through the ``words``
tag library (``{{ n|dice }}``)."""

from __future__ import annotations

from django.utils.translation import ngettext


def dice(n: int) -> str:
    """ "1 die", "0 dice", "3 dice", "-1 die" (a wound penalty): ``n`` and
    the noun for its size."""
    return ngettext("%(n)d die", "%(n)d dice", abs(n)) % {"n": n}
