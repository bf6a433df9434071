"""Traits at risk outside a move: which copies of a saved Trait are bid in
open challenges, and why an admin's edit of it is refused
(``characters.admin``, ``challenges.signals``)."""

from __future__ import annotations

from challenges.services._reads import OpenBid, open_bids
from characters.models import Chronicle, Trait


def trait_open_bids(trait: Trait) -> list[OpenBid]:
    """The copies of ``trait`` (as saved: its id, or its saved name and
    category for bids saved without ids) bid in unresolved challenges of its
    chronicle's open session, oldest challenge first; [] when no session is
    open. Two or three queries."""
    session = Chronicle(pk=trait.character.chronicle_id).open_session()
    if session is None:
        return []
    keys = {trait.pk, (trait.name, trait.category)}
    return [b for b in open_bids(session.pk, [trait.character_id]) if b.key in keys]


def trait_edit_refusal(trait_id: int, *, count: int = 0, category: str | None = None) -> str:
    """Why the saved Trait ``trait_id`` may not be deleted (``count`` 0), set
    to ``count`` copies or moved to ``category`` now: a sentence naming the
    open challenge it is bid in, or "" if the edit is safe (or there is no
    such Trait). A Trait at risk may be renamed (the challenge keeps the name
    as bid, and the Trait by its id); its copies bid cannot go, nor change
    category, until the challenge is voided or finished."""
    trait = Trait.objects.filter(pk=trait_id).select_related("character").first()
    bids = trait_open_bids(trait) if trait is not None else []
    if not bids:
        return ""
    first = bids[0]
    where = f"the open challenge #{first.challenge_id} ({first.title})"
    if len({b.challenge_id for b in bids}) > 1:
        where = f"{where} and others"
    if count == 0:
        return f"{first.name} is bid in {where}; void or finish it first."
    if category is not None and category != trait.category:
        return f"{first.name} is bid in {where}; its category cannot change until that is over."
    if count < len(bids):
        return (
            f"{len(bids)} copies of {first.name} are bid in {where}; "
            f"keep at least {len(bids)} until that is over."
        )
    return ""
