"""Open sockets follow the rights behind them.

A websocket is checked when it opens (``narrator.wsauth``, the consumers'
seats); these receivers tell the sockets already open when that check may
now fail, so that an open socket never has more rights than a new one
would. Each sends ``RIGHTS_CHANGED`` once the change commits, through the
channel layer (every worker on Redis), to the sockets concerned; each reads
its Django session and its seat again and closes when either is gone
(``BaseConsumer.rights_changed``: 4401 back to the login page, 4410 back to
her remaining characters).

- A logout (``user_logged_out``), and any save of a user but a login's
  ``last_login`` (a password changed, an account deactivated, a superuser
  flag taken away), or her deletion: her user group.
- A narrator removed from a chronicle (``Chronicle.narrators``, either side
  of the relation, or cleared): each removed user's group.
- A character given to another player, made an NPC or given to a player
  from the narrators, or deleted: the character's group (the old owner's
  phones, and narrators' NPC phones of it, close; the new owner's stay).

Join links revoked (``characters.services.join_links_revoke``) send the same
event to the user's group.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model, user_logged_out
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_save

from challenges.realtime import RIGHTS_CHANGED, broadcast_on_commit, character_group, user_group
from characters.models import Character, Chronicle


def users_rights_changed(user_ids) -> None:
    """Tell every socket of each user in ``user_ids`` (ints) to check its
    rights once the current transaction commits (at once if none)."""
    groups = [user_group(int(pk)) for pk in user_ids]
    if groups:
        broadcast_on_commit(groups, RIGHTS_CHANGED)


def _logged_out(sender, request, user, **kwargs) -> None:
    if user is None:
        return
    # Django's logout sends this signal before it ends the session: end it
    # now, so that the sockets told below find it gone (logout's own flush
    # then has nothing left to delete).
    if request is not None and hasattr(request, "session"):
        request.session.flush()
    users_rights_changed([user.pk])


def _user_saved(sender, instance, created: bool, update_fields=None, **kwargs) -> None:
    # A login saves last_login alone: nothing about her rights changed.
    if created or (update_fields is not None and set(update_fields) <= {"last_login"}):
        return
    users_rights_changed([instance.pk])


def _user_deleted(sender, instance, **kwargs) -> None:
    users_rights_changed([instance.pk])


def _narrators_changed(sender, instance, action: str, reverse: bool, pk_set, **kwargs) -> None:
    if action == "pre_clear":
        # Who is about to lose the role: the relation is empty by post_clear.
        if reverse:  # user.narrated_chronicles.clear(): this user
            instance._narrator_rights_cleared = [instance.pk]
        else:
            instance._narrator_rights_cleared = list(
                instance.narrators.values_list("pk", flat=True)
            )
        return
    if action == "post_clear":
        users_rights_changed(getattr(instance, "_narrator_rights_cleared", []))
    elif action == "post_remove":
        users_rights_changed([instance.pk] if reverse else (pk_set or []))


def _character_player_before(
    sender, instance: Character, raw: bool = False, update_fields=None, **kwargs
) -> None:
    if instance.pk is None or raw or (update_fields is not None and "player" not in update_fields):
        instance._player_before = instance.player_id  # her player is not what changes
        return
    instance._player_before = (
        Character.objects.filter(pk=instance.pk).values_list("player_id", flat=True).first()
    )


def _character_saved(sender, instance: Character, created: bool, raw: bool = False, **kw) -> None:
    if created or raw:
        return
    if getattr(instance, "_player_before", instance.player_id) != instance.player_id:
        broadcast_on_commit([character_group(instance.pk)], RIGHTS_CHANGED)


def _character_deleted(sender, instance: Character, **kwargs) -> None:
    broadcast_on_commit([character_group(instance.pk)], RIGHTS_CHANGED)


def connect() -> None:
    """Hook the receivers up (``ChallengesConfig.ready``)."""
    user = get_user_model()
    user_logged_out.connect(_logged_out, dispatch_uid="rights-logout")
    post_save.connect(_user_saved, sender=user, dispatch_uid="rights-user")
    post_delete.connect(_user_deleted, sender=user, dispatch_uid="rights-user-del")
    m2m_changed.connect(
        _narrators_changed, sender=Chronicle.narrators.through, dispatch_uid="rights-narrators"
    )
    pre_save.connect(_character_player_before, sender=Character, dispatch_uid="rights-char-pre")
    post_save.connect(_character_saved, sender=Character, dispatch_uid="rights-character")
    post_delete.connect(_character_deleted, sender=Character, dispatch_uid="rights-char-del")
