"""The study of a label exclusion is required, one exclusion per annotator and study (after
0009 gave every old exclusion its studies, in its own transaction)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotations", "0013_annotator_label_exclusion_per_study")]

    operations = [
        migrations.AlterField(
            model_name="annotatorlabelexclusion",
            name="study",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="annotator_label_exclusions",
                to="annotations.study",
            ),
        ),
        migrations.AddConstraint(
            model_name="annotatorlabelexclusion",
            constraint=models.UniqueConstraint(
                fields=("annotator", "study"), name="one_label_exclusion_per_annotator_study"
            ),
        ),
    ]
