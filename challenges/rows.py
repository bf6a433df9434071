"""The newest committed row of each recently changed challenge, per process.

A move's broadcast carries the challenge's new ``version``; both phones of the
challenge and every narrator dashboard connected to this worker then need that
row. The mover's worker keeps the row it has just committed
(``challenges.services`` calls :meth:`CommittedRows.remember` after commit),
so on one worker a move costs no read at all; another worker reads it once.
"""

from __future__ import annotations

import copy
from collections import OrderedDict

from challenges.models import Challenge


class CommittedRows:
    """The newest row this process has read of each recently changed challenge,
    shared by all its connections (a bounded LRU keyed by challenge id).

    A move's broadcast carries the challenge's new ``version``; both phones and
    every dashboard of a worker then need that row. :meth:`get` answers from
    memory when the row kept is at that version or later (it was read after
    that version committed), else reads it (one query) and keeps it. Rows are
    shared: callers read them, never change them.
    """

    def __init__(self, size: int = 2048) -> None:
        self.size = size
        self.items: OrderedDict[int, Challenge] = OrderedDict()

    def remember(self, challenge: Challenge) -> None:
        """Keep a just-committed ``challenge`` (a copy: the caller's instance
        may change afterwards) unless a later version is kept already."""
        kept = self.items.get(challenge.pk)
        if kept is None or kept.version < challenge.version:
            self._keep(copy.copy(challenge))

    def _keep(self, challenge: Challenge) -> None:
        self.items[challenge.pk] = challenge
        self.items.move_to_end(challenge.pk)
        if len(self.items) > self.size:
            self.items.popitem(last=False)

    def get(self, challenge_id: int, version: int | None) -> Challenge | None:
        """The challenge at ``version`` or later (None: read it anew); None if
        there is no such challenge."""
        kept = self.items.get(challenge_id)
        if kept is not None and version is not None and kept.version >= version:
            self.items.move_to_end(challenge_id)
            return kept
        challenge = Challenge.objects.filter(pk=challenge_id).first()
        if challenge is None:
            self.items.pop(challenge_id, None)
            return None
        self._keep(challenge)
        return challenge


committed_rows = CommittedRows()
