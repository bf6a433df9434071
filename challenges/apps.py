from django.apps import AppConfig


class ChallengesConfig(AppConfig):
    name = "challenges"
    verbose_name = "Challenges"

    def ready(self) -> None:
        from challenges import rights, signals

        # Rights first: a character given away tells her old phones to check
        # before the sheet's "character.updated" would redraw them.
        rights.connect()
        signals.connect()
