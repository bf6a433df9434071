"""``manage.py joinlinks [--chronicle NAME] [--base-url URL] [--qr] [USERNAME ...]``.

Prints a one-tap join link (django-sesame, scope "join", valid for
``JOIN_LINK_MAX_AGE`` seconds) for every player and narrator of a chronicle,
so a narrator can hand them out at the door: a player scans the QR code and
lands on her character's sheet, logged in.
"""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q

from characters.management.commands.evening import join_link, lan_address, qr_text
from characters.models import Chronicle


class Command(BaseCommand):
    help = "Print one-tap join links (and QR codes) for the players and narrators of a chronicle."

    def add_arguments(self, parser):
        parser.add_argument(
            "usernames", nargs="*", help="Only these users (default: every player and narrator)."
        )
        parser.add_argument("--chronicle", help="The chronicle's name (default: every chronicle).")
        parser.add_argument(
            "--base-url",
            help="The address players reach the app at "
            "(default: PUBLIC_URL, else http://LAN-ADDRESS:8000).",
        )
        parser.add_argument("--qr", action="store_true", help="Print a QR code under each link.")

    def handle(self, *args, usernames, chronicle, base_url, qr, **options):
        chronicles = Chronicle.objects.all()
        if chronicle:
            chronicles = chronicles.filter(name=chronicle)
            if not chronicles.exists():
                raise CommandError(f"There is no chronicle called {chronicle!r}.")
        users = (
            get_user_model()
            .objects.filter(
                Q(characters__chronicle__in=chronicles) | Q(narrated_chronicles__in=chronicles),
                is_active=True,
            )
            .distinct()
            .order_by("username")
        )
        if usernames:
            users = users.filter(username__in=usernames)
            missing = set(usernames) - {u.username for u in users}
            if missing:
                raise CommandError(f"No player or narrator called: {', '.join(sorted(missing))}.")
        base = (base_url or settings.PUBLIC_URL or f"http://{lan_address()}:8000").rstrip("/")
        for user in users:
            roles = [c.name for c in user.characters.filter(chronicle__in=chronicles)]
            if user.narrated_chronicles.filter(pk__in=chronicles).exists():
                roles.append("narrator")
            link = join_link(user, base)
            self.stdout.write(f"{user.get_username()} ({', '.join(roles)}): {link}")
            if qr:
                self.stdout.write(qr_text(link), ending="")
