"""One face-set model, step 3 of 3: the new links replace the old ones, and REFLECT's own
FaceSet and FaceTemplate models go (``generation.FaceSet`` / ``FaceTemplate`` are the one
definition)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("reflect", "0003_face_sets_to_generation")]

    operations = [
        migrations.RemoveField(model_name="faceimage", name="template"),
        migrations.RemoveField(model_name="biography", name="face_set"),
        migrations.RemoveField(model_name="reflectrun", name="face_set"),
        migrations.RemoveField(model_name="reflectreport", name="face_set"),
        migrations.RenameField(
            model_name="faceimage", old_name="template_new", new_name="template"
        ),
        migrations.RenameField(
            model_name="biography", old_name="face_set_new", new_name="face_set"
        ),
        migrations.RenameField(
            model_name="reflectrun", old_name="face_set_new", new_name="face_set"
        ),
        migrations.RenameField(
            model_name="reflectreport", old_name="face_set_new", new_name="face_set"
        ),
        migrations.AlterField(
            model_name="faceimage",
            name="template",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="images",
                to="generation.facetemplate",
            ),
        ),
        migrations.AlterField(
            model_name="biography",
            name="face_set",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="biographies",
                to="generation.faceset",
            ),
        ),
        migrations.AlterField(
            model_name="reflectrun",
            name="face_set",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="runs",
                to="generation.faceset",
            ),
        ),
        migrations.AlterField(
            model_name="reflectreport",
            name="face_set",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="report",
                to="generation.faceset",
            ),
        ),
        migrations.AddConstraint(
            model_name="faceimage",
            constraint=models.UniqueConstraint(
                fields=("template", "race", "gender", "variant"), name="reflect_image_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="biography",
            constraint=models.UniqueConstraint(
                fields=("face_set", "occupation", "key"), name="reflect_biography_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="reflectrun",
            constraint=models.UniqueConstraint(
                fields=("face_set", "label"), name="reflect_run_label_unique"
            ),
        ),
        migrations.DeleteModel(name="FaceTemplate"),
        migrations.DeleteModel(name="FaceSet"),
    ]
