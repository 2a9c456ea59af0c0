"""Ready the edit jobs' rows for one face-set model (0004): names made unique, occupations set.

A data migration of its own: PostgreSQL refuses to alter a table in the transaction that
changed its rows.
"""

from django.db import migrations

UNSPECIFIED_OCCUPATION = "unspecified"  # generation.faces.services.UNSPECIFIED_OCCUPATION


def names_unique_and_occupations_set(apps, schema_editor):
    """Before the unique name: a repeated name gets its slug appended (slugs are unique).
    A source photo outside an occupation folder was exported as "unspecified": say so."""
    FaceSet = apps.get_model("generation", "FaceSet")
    FaceTemplate = apps.get_model("generation", "FaceTemplate")
    seen = set()
    for face_set in FaceSet.objects.order_by("created_at", "pk"):
        if face_set.name in seen:
            suffix = f" ({face_set.slug})"
            face_set.name = face_set.name[: 200 - len(suffix)] + suffix
            face_set.save(update_fields=["name"])
        seen.add(face_set.name)
    FaceTemplate.objects.filter(occupation="").update(occupation=UNSPECIFIED_OCCUPATION)


class Migration(migrations.Migration):
    dependencies = [("generation", "0002_prompt_rephrasing")]

    operations = [
        migrations.RunPython(names_unique_and_occupations_set, migrations.RunPython.noop),
    ]
