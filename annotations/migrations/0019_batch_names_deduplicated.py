"""Before batch names become unique per study (0020): a study with two batches of one name keeps
the oldest as it is and renames the others "name (2)", "name (3)" … (a number no batch of the
study has), so `create_invites --batch NAME` names one batch again. Imported-label batches,
which the constraint leaves out, keep their names."""

from django.db import migrations

NAME_MAX_LENGTH = 200


def _free_name(name: str, taken: set[str]) -> str:
    number = 2
    while True:
        suffix = f" ({number})"
        candidate = name[: NAME_MAX_LENGTH - len(suffix)] + suffix
        if candidate not in taken:
            return candidate
        number += 1


def deduplicate_batch_names(apps, schema_editor):
    Batch = apps.get_model("annotations", "Batch")
    rows = Batch.objects.exclude(policy="imported").order_by("study_id", "created_at", "pk")
    seen: dict[int, set[str]] = {}
    renames = []
    for pk, study_id, name in rows.values_list("pk", "study_id", "name"):
        taken = seen.setdefault(study_id, set())
        if name in taken:
            renames.append((pk, study_id, name))
        else:
            taken.add(name)
    for pk, study_id, name in renames:
        # Every name of the study, imported ones too, so a new name repeats none.
        taken = seen[study_id] | set(
            Batch.objects.filter(study_id=study_id).values_list("name", flat=True)
        )
        new_name = _free_name(name, taken)
        seen[study_id].add(new_name)
        Batch.objects.filter(pk=pk).update(name=new_name)


class Migration(migrations.Migration):
    dependencies = [("annotations", "0018_batch_probability_sample")]

    operations = [migrations.RunPython(deduplicate_batch_names, migrations.RunPython.noop)]
