"""``manage.py checkstate [--session ID]``: report broken play-history invariants."""

from django.core.management.base import BaseCommand, CommandError

from challenges.consistency import find_inconsistencies


class Command(BaseCommand):
    help = (
        "Check that challenges, tests, lost Traits, wounds, events and client action ids "
        "agree (after a crash or a failover). Exits with status 1 if anything is wrong."
    )

    def add_arguments(self, parser):
        parser.add_argument("--session", type=int, help="only this session's challenges")

    def handle(self, *args, session=None, **options):
        problems = find_inconsistencies(session)
        for problem in problems:
            self.stdout.write(problem)
        if problems:
            raise CommandError(f"{len(problems)} inconsistencies found.")
        self.stdout.write(self.style.SUCCESS("The play history is consistent."))
