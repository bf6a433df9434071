"""``manage.py evening [--host 0.0.0.0] [--port 8000] [--no-serve]``: run an evening.

Migrates, collects static files, makes sure the demo data exists, prints a
one-tap login link and QR code for every demo user, each named by the
characters and chronicles it opens, then (last, so that they stay on the
screen) the printable QR sheets and the narrators' and the admin's addresses,
on the app's address (``PUBLIC_URL``, else its address on the LAN); then
serves the ASGI app (HTTP and websockets) with daphne.
"""

import io
import socket

import qrcode
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.test import override_settings
from django.urls import reverse
from sesame.utils import get_query_string

from characters.management.commands.demo import (
    BNS_CHRONICLE,
    CHRONICLE,
    STORY_CHRONICLE,
    UKM_CHRONICLE,
    USERS,
)
from characters.models import Chronicle

UNSPECIFIED_HOSTS = {"", "0.0.0.0", "::"}
ASGI_APP = "narrator.asgi:application"


def daphne_options() -> list[str]:
    """Daphne's options for ``make run``: its message limit is
    ``settings.WS_MAX_FRAME_BYTES`` (Daphne's own default, 1 MiB), because
    Daphne applies it to the frames it sends as well as to those it
    receives: at 64 KiB a crowded dashboard's view raised
    ``PayloadExceededError`` and the tablet reconnected forever. The
    consumers refuse a client's frame above ``WS_MAX_MESSAGE_BYTES``."""
    return ["--websocket-max-message-size", str(settings.WS_MAX_FRAME_BYTES)]


def lan_address() -> str:
    """This machine's address on the LAN, or 127.0.0.1 if there is none.

    Connecting a UDP socket only picks the outgoing interface; no packet is
    sent. 192.0.2.1 is TEST-NET-1 (RFC 5737), never a real host.
    """
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.connect(("192.0.2.1", 80))
            address = sock.getsockname()[0]
    except OSError:
        return "127.0.0.1"
    return address if address not in UNSPECIFIED_HOSTS else "127.0.0.1"


def qr_text(data: str) -> str:
    """``data`` as a compact QR code of block characters, light on dark."""
    code = qrcode.QRCode(border=1, error_correction=qrcode.constants.ERROR_CORRECT_L)
    code.add_data(data)
    code.make(fit=True)
    out = io.StringIO()
    code.print_ascii(out=out, invert=True)
    return out.getvalue()


def join_link(user, base: str) -> str:
    """A one-tap login link for ``user`` at ``base`` ("http://host:port"): a
    django-sesame token of scope "join", valid for ``JOIN_LINK_MAX_AGE`` seconds."""
    return base + reverse("join") + get_query_string(user, scope="join")


def join_label(user) -> str:
    """Whose join card this is: "Helen — Demo Chronicle (player helen)" for
    each character ``user`` plays ("; " between them), else the chronicles she
    narrates, "Narrator — narrates Demo Chronicle, … (user narrator)", else her
    name, "Admin (user admin)"."""
    name = user.get_username()
    characters = user.characters.select_related("chronicle").order_by("chronicle__name", "name")
    if characters:
        played = "; ".join(f"{c.name} — {c.chronicle.name}" for c in characters)
        return f"{played} (player {name})"
    narrated = ", ".join(user.narrated_chronicles.order_by("name").values_list("name", flat=True))
    shown = user.get_short_name() or name
    return f"{shown} — narrates {narrated} (user {name})" if narrated else f"{shown} (user {name})"


class Command(BaseCommand):
    help = (
        "Migrate, collect static files, ensure the demo data, print one-tap join "
        "links with QR codes, and serve Narrator on the LAN."
    )

    def add_arguments(self, parser):
        parser.add_argument("--host", default="0.0.0.0", help="Address to bind (0.0.0.0: all).")
        parser.add_argument("--port", type=int, default=8000, help="Port to serve on.")
        parser.add_argument(
            "--no-serve",
            action="store_true",
            help="Prepare and print the links, then exit without serving.",
        )

    def handle(self, *args, host: str, port: int, no_serve: bool, **options):
        verbosity = options["verbosity"]
        quiet = max(verbosity - 1, 0)
        call_command("migrate", interactive=False, verbosity=quiet)
        call_command("collectstatic", interactive=False, verbosity=quiet)
        call_command("demo", stdout=self.stdout, verbosity=verbosity)

        public = lan_address() if host in UNSPECIFIED_HOSTS else host
        base = settings.PUBLIC_URL or f"http://{public}:{port}"
        users = get_user_model().objects.filter(username__in=[u.username for u in USERS])
        by_name = {user.username: user for user in users}
        links = {spec.username: join_link(by_name[spec.username], base) for spec in USERS}
        # Players first, staff last: the narrator's code is the nearest to her addresses.
        for spec in sorted(USERS, key=lambda spec: spec.staff):
            self.stdout.write("")
            self.stdout.write(self.style.MIGRATE_HEADING(join_label(by_name[spec.username])))
            self.stdout.write(f"Join as {spec.username}: {links[spec.username]}")
            self.stdout.write(qr_text(links[spec.username]), ending="")
        # What a narrator needs is printed last, so that it stays on the screen.
        self.stdout.write("")
        demos = [CHRONICLE, UKM_CHRONICLE, BNS_CHRONICLE, STORY_CHRONICLE]
        for chronicle in Chronicle.objects.filter(name__in=demos):
            # A chronicle that plays no MET challenge (bns) has no prepared statics.
            cards = reverse("statics_sheet", args=[chronicle.pk])
            joins = reverse("join_sheet", args=[chronicle.pk])
            sheets = [f"statics {base}{cards}"] if chronicle.rules.met_challenges else []
            sheets.append(f"join links {base}{joins}")
            if chronicle.has_dice_pools:  # sheets of dots, printed
                printed = reverse("story_sheets_print", args=[chronicle.pk])
                sheets.append(f"character sheets {base}{printed}")
            self.stdout.write(
                f"Print {chronicle}'s QR cards (signed in as a narrator): " + " · ".join(sheets)
            )
        dashboard = reverse("narrate_index")
        admin = reverse("admin:index")
        self.stdout.write("")
        self.stdout.write(self.style.SUCCESS(f"Narrator: {base}/"))
        self.stdout.write(
            f"Narrators' dashboard: {base}{dashboard} "
            f"(one tap as narrator: {links['narrator']}&next={dashboard})"
        )
        self.stdout.write(f"Admin: {base}{admin} (one tap as admin: {links['admin']}&next={admin})")

        if no_serve:
            return
        self.stdout.write("")
        self.stdout.write(f"Serving on {host}:{port}; stop with Ctrl-C.")
        self.stdout.flush()
        # The pages served (the printed join cards) link where these links do.
        with override_settings(PUBLIC_URL=base):
            serve(host, port)


def serve(host: str, port: int) -> None:
    """Serve ``narrator.asgi:application`` with daphne until interrupted."""
    from daphne.cli import CommandLineInterface

    CommandLineInterface().run(["-b", host, "-p", str(port), *daphne_options(), ASGI_APP])
