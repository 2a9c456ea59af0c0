"""Label exclusions per study (issue 20 item 9): an exclusion made before this migration held in
every study; it becomes one exclusion in each study the annotator has assignments in, so no
statistic changes. Annotator reviews record the study they were made on."""

import django.db.models.deletion
from django.db import migrations, models


def exclusions_per_study(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        # Check the rows' foreign keys now: PostgreSQL refuses the index this migration
        # creates at its end while deferred checks of rows written here are pending.
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    Exclusion = apps.get_model("annotations", "AnnotatorLabelExclusion")
    Assignment = apps.get_model("annotations", "Assignment")
    for exclusion in list(Exclusion.objects.filter(study__isnull=True)):
        studies = set(
            Assignment.objects.filter(annotator_id=exclusion.annotator_id).values_list(
                "batch__study", flat=True
            )
        )
        for study_id in sorted(studies):
            Exclusion.objects.create(
                annotator_id=exclusion.annotator_id,
                study_id=study_id,
                reason=exclusion.reason,
                excluded_at=exclusion.excluded_at,
            )
        exclusion.delete()


class Migration(migrations.Migration):
    dependencies = [("annotations", "0012_label_example")]

    operations = [
        migrations.AlterField(
            model_name="annotatorlabelexclusion",
            name="annotator",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="label_exclusions",
                to="annotations.annotator",
            ),
        ),
        migrations.AddField(
            model_name="annotatorlabelexclusion",
            name="study",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="annotator_label_exclusions",
                to="annotations.study",
            ),
        ),
        migrations.AddField(
            model_name="annotatorreview",
            name="study",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="annotator_reviews",
                to="annotations.study",
            ),
        ),
        # Last, and the study column becomes required in 0010: PostgreSQL refuses to alter a
        # table with rows written in the same transaction.
        migrations.RunPython(exclusions_per_study, migrations.RunPython.noop),
    ]
