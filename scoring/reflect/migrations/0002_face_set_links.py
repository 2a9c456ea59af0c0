"""One face-set model, step 1 of 3: REFLECT's rows get links to ``generation.FaceSet`` and
``generation.FaceTemplate`` beside the old ones (filled by 0003, which replace them in 0004).

The old links become nullable and the constraints naming them are dropped for the move, so
the reverse of 0003 can fill them again.
"""

import django.db.models.deletion
from django.db import migrations, models


def _face_set_link(**options):
    return models.ForeignKey(
        null=True,
        on_delete=django.db.models.deletion.CASCADE,
        related_name="+",
        to="generation.faceset",
        **options,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("generation", "0004_one_face_set_model"),
        ("reflect", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="faceimage",
            name="template_new",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="generation.facetemplate",
            ),
        ),
        migrations.AddField(model_name="biography", name="face_set_new", field=_face_set_link()),
        migrations.AddField(model_name="reflectrun", name="face_set_new", field=_face_set_link()),
        migrations.AddField(
            model_name="reflectreport",
            name="face_set_new",
            field=models.OneToOneField(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="generation.faceset",
            ),
        ),
        migrations.RemoveConstraint(model_name="faceimage", name="reflect_image_unique"),
        migrations.RemoveConstraint(model_name="biography", name="reflect_biography_unique"),
        migrations.RemoveConstraint(model_name="reflectrun", name="reflect_run_label_unique"),
        migrations.AlterField(
            model_name="faceimage",
            name="template",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="images",
                to="reflect.facetemplate",
            ),
        ),
        migrations.AlterField(
            model_name="biography",
            name="face_set",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="biographies",
                to="reflect.faceset",
            ),
        ),
        migrations.AlterField(
            model_name="reflectrun",
            name="face_set",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="runs",
                to="reflect.faceset",
            ),
        ),
        migrations.AlterField(
            model_name="reflectreport",
            name="face_set",
            field=models.OneToOneField(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="report",
                to="reflect.faceset",
            ),
        ),
    ]
