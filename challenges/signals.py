"""Sheet edits made outside a challenge (the admin, a shell) reach the screens.

A phone keeps its character's sheet from its last whole view
(``challenges.consumers.PlayConsumer``), and a narrator's roster row shows it:
when a narrator edits a character, her Traits or Abilities, or her health
tonight, both hear ``character.updated`` once the edit commits. Moves of
challenges do not pass here: they save losses and wounds with their own
broadcasts, and a Presence a service creates is an arrival, announced by
its own code.

A Trait bid in an open challenge cannot be deleted from anywhere (a shell, a
cascade from its character): ``pre_delete`` raises ProtectedError naming the
challenge, so that the challenge can always resolve. The admin refuses the
same edit with a form error before it gets here.
"""

from __future__ import annotations

import threading

from django.db import transaction
from django.db.models import ProtectedError
from django.db.models.signals import post_delete, post_save, pre_delete

from challenges.realtime import CHARACTER_UPDATED, broadcast, character_group, narrators_group
from characters.models import Ability, Character, Discipline, GameSession, Presence, Trait, Weapon

# Characters with an announcement waiting for this thread's commit: one
# broadcast per transaction, however many of her rows an admin form saves.
_local = threading.local()


def _waiting() -> set[int]:
    if not hasattr(_local, "waiting"):
        _local.waiting = set()
    return _local.waiting


def announce(character_id: int) -> None:
    """Broadcast ``character.updated`` for ``character_id`` to her phones and
    to the dashboards of her chronicle's open session once the current
    transaction commits (at once if none), once per transaction."""
    _waiting().add(character_id)
    transaction.on_commit(lambda: _send(character_id))


def _send(character_id: int) -> None:
    if character_id not in _waiting():
        return  # already announced by an earlier callback of this commit
    _waiting().discard(character_id)
    groups = [character_group(character_id)]
    session_id = (
        GameSession.objects.filter(chronicle__characters=character_id, ended_at__isnull=True)
        .values_list("pk", flat=True)
        .first()
    )
    ids = {"character_id": character_id}
    if session_id is not None:
        groups.append(narrators_group(session_id))
        ids["session_id"] = session_id
    broadcast(groups, CHARACTER_UPDATED, **ids)


def _sheet_row_changed(sender, instance, **kwargs) -> None:
    announce(instance.character_id)


def _character_changed(sender, instance: Character, created: bool = False, **kwargs) -> None:
    if not created:
        announce(instance.pk)


def _presence_changed(sender, instance: Presence, created: bool, **kwargs) -> None:
    if not created:  # a narrator changed her health tonight
        _sheet_row_changed(sender, instance)


def _refuse_deleting_a_trait_at_risk(sender, instance: Trait, **kwargs) -> None:
    from challenges.services import trait_edit_refusal

    refusal = trait_edit_refusal(instance.pk)
    if refusal:
        raise ProtectedError(refusal, [instance])


def connect() -> None:
    """Hook the receivers up (``ChallengesConfig.ready``)."""
    for model in (Trait, Ability, Discipline, Weapon):
        post_save.connect(_sheet_row_changed, sender=model, dispatch_uid=f"sheet-{model.__name__}")
        post_delete.connect(
            _sheet_row_changed, sender=model, dispatch_uid=f"sheet-del-{model.__name__}"
        )
    pre_delete.connect(_refuse_deleting_a_trait_at_risk, sender=Trait, dispatch_uid="trait-at-risk")
    post_save.connect(_character_changed, sender=Character, dispatch_uid="sheet-character")
    post_save.connect(_presence_changed, sender=Presence, dispatch_uid="sheet-presence")
