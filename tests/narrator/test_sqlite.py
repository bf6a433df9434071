"""The embedded SQLite database's pragmas (narrator/settings.py): WAL, so
readers never wait for the writer, and synchronous=NORMAL, so a commit does not
wait for the disk (issue 14) while a killed server still loses nothing."""

from __future__ import annotations

import copy

import pytest
from django.conf import settings
from django.db.backends.sqlite3.base import DatabaseWrapper

pytestmark = pytest.mark.skipif(
    settings.DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3",
    reason="the embedded default only (DATABASE_URL names another database)",
)


def test_a_new_connection_is_in_wal_mode_with_normal_synchronous(tmp_path, django_db_blocker):
    config = copy.deepcopy(settings.DATABASES["default"])
    config["NAME"] = str(tmp_path / "narrator.sqlite3")
    connection = DatabaseWrapper(config, alias="pragmas")
    try:
        with django_db_blocker.unblock(), connection.cursor() as cursor:
            cursor.execute("PRAGMA journal_mode")
            assert cursor.fetchone()[0] == "wal"
            cursor.execute("PRAGMA synchronous")
            assert cursor.fetchone()[0] == 1  # NORMAL (FULL is 2)
    finally:
        connection.close()
