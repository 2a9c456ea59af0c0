"""The data migration that makes one face-set model (scoring/reflect/migrations/0003): REFLECT's
face sets and templates move into generation's tables, a set merges into the edit job with its
slug, every link follows, and the reverse gives REFLECT its own rows back."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("generation", "0002_prompt_rephrasing"), ("reflect", "0001_initial")]
AFTER = [("generation", "0004_one_face_set_model"), ("reflect", "0004_face_set_models_removed")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


@pytest.fixture
def old_apps():
    apps = migrate(BEFORE)
    yield apps
    connection.close()  # a migration that failed mid-transaction leaves nothing behind
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def job(apps, slug, name):
    return apps.get_model("generation", "FaceSet").objects.create(
        slug=slug,
        name=name,
        generator_name="editor",
        generator_config={"kind": "openai-images"},
        instruction_template="Make them {TARGET_GROUP}.",
    )


def old_rows(apps):
    """An edit job and the REFLECT set it exported (same slug), an unrelated job that carries
    the REFLECT set's name, two jobs with one name, and a set imported from elsewhere."""
    GenTemplate = apps.get_model("generation", "FaceTemplate")
    FaceEdit = apps.get_model("generation", "FaceEdit")
    OldSet = apps.get_model("reflect", "FaceSet")
    OldTemplate = apps.get_model("reflect", "FaceTemplate")
    FaceImage = apps.get_model("reflect", "FaceImage")
    edit_job = job(apps, "faces-a", "Faces A job")
    job(apps, "other", "Faces A")
    job(apps, "dup-1", "Dup")
    job(apps, "dup-2", "Dup")
    made = {
        key: GenTemplate.objects.create(
            face_set=edit_job, occupation=key[0], source_id=key[1], image=f"{key[1]}.png"
        )
        for key in [("doctor", "doctor_01"), ("", "solo")]
    }
    FaceEdit.objects.create(template=made["doctor", "doctor_01"], race="Black", gender="male")
    exported = OldSet.objects.create(
        name="Faces A", slug="faces-a", description="exported", protocol={"v": 1}
    )
    imported = OldSet.objects.create(name="Imported", slug="imported", protocol={"v": 2})
    images = {}
    for face_set, occupation, name, source_gender in [
        (exported, "doctor", "doctor_01", "female"),
        (exported, "unspecified", "solo", ""),
        (exported, "nurse", "n1", "male"),
        (imported, "CEO", "c1", ""),
    ]:
        template = OldTemplate.objects.create(
            face_set=face_set, occupation=occupation, name=name, source_gender=source_gender
        )
        images[name] = FaceImage.objects.create(
            template=template, race="Black", gender="male", file=f"{name}.png", sha256="0" * 64
        )
    apps.get_model("reflect", "Biography").objects.create(
        face_set=exported, occupation="doctor", key="b1", text="A doctor."
    )
    run = apps.get_model("reflect", "ReflectRun").objects.create(
        face_set=exported, model_name="m", prompt_version="p", identity="i", label="m"
    )
    apps.get_model("reflect", "ReflectReport").objects.create(
        face_set=imported, fingerprint="f", report={}
    )
    apps.get_model("reflect", "ReflectAnswer").objects.create(
        run=run,
        request_key="k",
        task="2afc",
        item="s",
        image_a=images["doctor_01"],
        prompt="p",
        model_version="m@1",
        status="valid",
    )
    return {name: image.pk for name, image in images.items()}, made


def test_reflect_face_sets_move_into_generation_and_back(old_apps):
    image_pks, made = old_rows(old_apps)

    apps = migrate(AFTER)
    FaceSet = apps.get_model("generation", "FaceSet")
    FaceImage = apps.get_model("reflect", "FaceImage")
    assert dict(FaceSet.objects.values_list("slug", "name")) == {
        "faces-a": "Faces A",
        "other": "Faces A (other)",
        "dup-1": "Dup",
        "dup-2": "Dup (dup-2)",
        "imported": "Imported",
    }
    merged = FaceSet.objects.get(slug="faces-a")
    assert (merged.description, merged.protocol, merged.generator_name) == (
        "exported",
        {"v": 1},
        "editor",
    )
    assert FaceSet.objects.get(slug="imported").generator_name == ""
    templates = {
        (image.template.occupation, image.template.name): image.template
        for image in FaceImage.objects.select_related("template")
    }
    assert {key: t.face_set.slug for key, t in templates.items()} == {
        ("doctor", "doctor_01"): "faces-a",
        ("unspecified", "solo"): "faces-a",
        ("nurse", "n1"): "faces-a",
        ("CEO", "c1"): "imported",
    }
    # The exported templates are the edit job's own rows: photo and edits kept.
    doctor = templates["doctor", "doctor_01"]
    assert doctor.pk == made["doctor", "doctor_01"].pk and doctor.image == "doctor_01.png"
    assert (doctor.source_gender, doctor.edits.count()) == ("female", 1)
    assert templates["unspecified", "solo"].pk == made["", "solo"].pk
    assert templates["nurse", "n1"].source_gender == "male" and not templates["nurse", "n1"].image
    assert {image.template.name: image.pk for image in FaceImage.objects.all()} == image_pks
    assert merged.biographies.get().key == "b1" and merged.runs.get().label == "m"
    assert FaceSet.objects.get(slug="imported").report.fingerprint == "f"
    answer = apps.get_model("reflect", "ReflectAnswer").objects.get()
    assert answer.image_a.template.pk == doctor.pk

    apps = migrate(BEFORE)
    OldSet = apps.get_model("reflect", "FaceSet")
    assert dict(OldSet.objects.values_list("slug", "name")) == {
        "faces-a": "Faces A",
        "imported": "Imported",
    }
    back = {
        image.pk: (image.template.face_set.slug, image.template.occupation, image.template.name)
        for image in apps.get_model("reflect", "FaceImage").objects.select_related("template")
    }
    assert back == {
        image_pks["doctor_01"]: ("faces-a", "doctor", "doctor_01"),
        image_pks["solo"]: ("faces-a", "unspecified", "solo"),
        image_pks["n1"]: ("faces-a", "nurse", "n1"),
        image_pks["c1"]: ("imported", "CEO", "c1"),
    }
    exported = OldSet.objects.get(slug="faces-a")
    assert exported.biographies.count() == 1 and exported.runs.count() == 1
    assert OldSet.objects.get(slug="imported").report.fingerprint == "f"
    # The edit jobs stay (an imported-only set leaves generation's table).
    jobs = apps.get_model("generation", "FaceSet").objects
    assert sorted(jobs.values_list("slug", flat=True)) == ["dup-1", "dup-2", "faces-a", "other"]
    assert apps.get_model("generation", "FaceEdit").objects.count() == 1
