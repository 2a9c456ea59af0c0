"""One face-set model: the FOCUS edit job gains what REFLECT's face set had (description,
protocol, unique name), its templates REFLECT's spelling (``name``, occupation required), and
the edit-job settings become optional for a set imported from a folder.

scoring/reflect/migrations/0002-0004 then move REFLECT's face sets and templates into these
tables.
"""

from django.db import migrations, models

import generation.data
import generation.models


class Migration(migrations.Migration):
    dependencies = [("generation", "0003_face_set_names_unique")]

    operations = [
        migrations.AlterModelOptions(name="faceset", options={"ordering": ["name"]}),
        migrations.AlterField(
            model_name="faceset",
            name="slug",
            field=models.SlugField(max_length=200, unique=True),
        ),
        migrations.AlterField(
            model_name="faceset",
            name="name",
            field=models.CharField(max_length=200, unique=True),
        ),
        migrations.AddField(
            model_name="faceset",
            name="description",
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name="faceset",
            name="protocol",
            field=models.JSONField(default=generation.data.reflect_protocol),
        ),
        migrations.AlterField(
            model_name="faceset",
            name="generator_name",
            field=models.CharField(blank=True, max_length=100),
        ),
        migrations.AlterField(
            model_name="faceset",
            name="generator_config",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AlterField(
            model_name="faceset",
            name="instruction_template",
            field=models.TextField(blank=True),
        ),
        migrations.RemoveConstraint(model_name="facetemplate", name="unique_template"),
        migrations.RenameField(model_name="facetemplate", old_name="source_id", new_name="name"),
        migrations.AlterModelOptions(
            name="facetemplate", options={"ordering": ["face_set", "occupation", "name"]}
        ),
        migrations.AlterField(
            model_name="facetemplate",
            name="occupation",
            field=models.CharField(max_length=100),
        ),
        migrations.AlterField(
            model_name="facetemplate",
            name="source_gender",
            field=models.CharField(
                blank=True, choices=[("female", "female"), ("male", "male")], max_length=10
            ),
        ),
        migrations.AlterField(
            model_name="facetemplate",
            name="image",
            field=models.FileField(
                blank=True, max_length=500, upload_to=generation.models.face_image_path
            ),
        ),
        migrations.AlterField(
            model_name="facetemplate",
            name="image_sha256",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AddConstraint(
            model_name="facetemplate",
            constraint=models.UniqueConstraint(
                fields=("face_set", "occupation", "name"), name="unique_face_template"
            ),
        ),
    ]
