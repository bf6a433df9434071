# s12 (issue 12 gaps): what a test-pool sheet's character is, for Pierce the
# Heart, and how it left her tonight (seeds/002 "Combat Maneuvers").

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("characters", "0008_s12_bns_sheets"),
    ]

    operations = [
        migrations.AddField(
            model_name="character",
            name="creature",
            field=models.CharField(
                blank=True,
                choices=[("mortal", "Mortal"), ("vampire", "Vampire"), ("other", "Other creature")],
                db_default="",
                default="",
                help_text=(
                    "Pierce the Heart kills a mortal and stakes a vampire hit with a staking "
                    'weapon (seeds/002 "Combat Maneuvers"); a vampire cannot be knocked out. '
                    "Not said or other: the damage only."
                ),
                max_length=10,
                verbose_name="creature",
            ),
        ),
        migrations.AddField(
            model_name="presence",
            name="fate",
            field=models.CharField(
                blank=True,
                choices=[("dead", "Dead"), ("staked", "Staked")],
                db_default="",
                default="",
                help_text=(
                    "Set by a successful Pierce the Heart; a narrator clears it "
                    "(the stake pulled out)."
                ),
                max_length=10,
                verbose_name="fate tonight",
            ),
        ),
    ]
