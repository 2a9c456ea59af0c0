"""One face-set model, step 2 of 3: copy REFLECT's face sets and templates into
``generation.FaceSet`` / ``FaceTemplate`` and point images, biographies, runs and reports there.

A REFLECT set whose slug an edit job already has is the set that job exported: the two become
one row (the REFLECT name, description and protocol; the job's generator settings), and a
template the job made (same occupation and name) keeps its source photo and edits. Another edit
job that happens to carry the REFLECT set's name gets its slug appended, as names are unique.
"""

from django.db import migrations


def _name_free(FaceSet, name, *, keep_pk):
    for other in FaceSet.objects.filter(name=name).exclude(pk=keep_pk):
        suffix = f" ({other.slug})"
        other.name = other.name[: 200 - len(suffix)] + suffix
        other.save(update_fields=["name"])


def face_sets_forward(apps, schema_editor):
    OldSet = apps.get_model("reflect", "FaceSet")
    OldTemplate = apps.get_model("reflect", "FaceTemplate")
    FaceSet = apps.get_model("generation", "FaceSet")
    FaceTemplate = apps.get_model("generation", "FaceTemplate")
    FaceImage = apps.get_model("reflect", "FaceImage")
    linked = [
        apps.get_model("reflect", name) for name in ("Biography", "ReflectRun", "ReflectReport")
    ]
    for old in OldSet.objects.order_by("pk"):
        face_set = FaceSet.objects.filter(slug=old.slug).first()
        _name_free(FaceSet, old.name, keep_pk=face_set.pk if face_set else None)
        if face_set is None:
            face_set = FaceSet(slug=old.slug)
        face_set.name, face_set.description = old.name, old.description
        face_set.protocol = old.protocol
        face_set.save()
        if face_set.created_at > old.created_at:
            FaceSet.objects.filter(pk=face_set.pk).update(created_at=old.created_at)
        made_here = {
            (t.occupation, t.name): t for t in FaceTemplate.objects.filter(face_set=face_set)
        }
        for old_template in OldTemplate.objects.filter(face_set=old):
            template = made_here.get((old_template.occupation, old_template.name))
            if template is None:
                template = FaceTemplate.objects.create(
                    face_set=face_set,
                    occupation=old_template.occupation,
                    name=old_template.name,
                    source_gender=old_template.source_gender,
                )
            elif old_template.source_gender:
                template.source_gender = old_template.source_gender
                template.save(update_fields=["source_gender"])
            FaceImage.objects.filter(template=old_template).update(template_new=template)
        for model in linked:
            model.objects.filter(face_set=old).update(face_set_new=face_set)


def face_sets_backward(apps, schema_editor):
    """REFLECT's face sets again, from every set that has REFLECT rows; a set that was only
    imported (no generator) leaves the generation tables, an edit job stays there."""
    OldSet = apps.get_model("reflect", "FaceSet")
    OldTemplate = apps.get_model("reflect", "FaceTemplate")
    FaceSet = apps.get_model("generation", "FaceSet")
    FaceTemplate = apps.get_model("generation", "FaceTemplate")
    FaceImage = apps.get_model("reflect", "FaceImage")
    linked = [
        apps.get_model("reflect", name) for name in ("Biography", "ReflectRun", "ReflectReport")
    ]
    used = set(FaceImage.objects.values_list("template_new__face_set_id", flat=True))
    for model in linked:
        used |= set(model.objects.values_list("face_set_new_id", flat=True))
    used.discard(None)
    for face_set in FaceSet.objects.filter(pk__in=used).order_by("pk"):
        old = OldSet.objects.create(
            name=face_set.name,
            slug=face_set.slug,
            description=face_set.description,
            protocol=face_set.protocol,
        )
        OldSet.objects.filter(pk=old.pk).update(created_at=face_set.created_at)
        for template in FaceTemplate.objects.filter(face_set=face_set):
            images = FaceImage.objects.filter(template_new=template)
            if not images.exists():
                continue
            old_template = OldTemplate.objects.create(
                face_set=old,
                occupation=template.occupation,
                name=template.name,
                source_gender=template.source_gender,
            )
            images.update(template=old_template, template_new=None)
        for model in linked:
            model.objects.filter(face_set_new=face_set).update(face_set=old, face_set_new=None)
    FaceSet.objects.filter(pk__in=used, generator_name="").delete()


class Migration(migrations.Migration):
    dependencies = [("reflect", "0002_face_set_links")]

    operations = [migrations.RunPython(face_sets_forward, face_sets_backward)]
