from django.db import migrations, models


def number_sessions(apps, schema_editor):
    """Number each chronicle's existing sessions 1, 2, 3… in the order they started."""
    GameSession = apps.get_model("characters", "GameSession")
    chronicle_ids = GameSession.objects.values_list("chronicle_id", flat=True).distinct()
    for chronicle_id in chronicle_ids:
        sessions = GameSession.objects.filter(chronicle_id=chronicle_id).order_by(
            "started_at", "pk"
        )
        for n, session in enumerate(sessions, start=1):
            GameSession.objects.filter(pk=session.pk).update(number=n)


class Migration(migrations.Migration):
    dependencies = [("characters", "0002_join_link_revocation")]

    operations = [
        migrations.AddField(
            model_name="gamesession",
            name="number",
            field=models.PositiveIntegerField(
                default=0,
                help_text="Sessions of a chronicle are numbered 1, 2, 3… as they start.",
            ),
        ),
        migrations.RunPython(number_sessions, migrations.RunPython.noop),
        migrations.AddField(
            model_name="presence",
            name="status",
            field=models.CharField(
                choices=[("present", "present"), ("break", "on a break"), ("absent", "absent")],
                default="present",
                db_default="present",
                max_length=10,
            ),
        ),
    ]
