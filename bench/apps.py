from django.apps import AppConfig


class BenchConfig(AppConfig):
    """The load bench: a tool apart from the product (``manage.py bench``). No
    models; installed only so that Django finds its command."""

    name = "bench"
    verbose_name = "Load bench"
