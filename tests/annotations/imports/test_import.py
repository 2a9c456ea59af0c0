import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotations.imports import importers as imports
from annotations.imports.manifest import ManifestInvalid
from annotations.models import Annotation, AnnotationHistory, AutomatedJudgment, Item
from tests.support.django_fixtures import manifest_line, write_image, write_manifest

pytestmark = pytest.mark.django_db


def _stored_files(settings):
    root = settings.MEDIA_ROOT
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_import_items_command_imports_items_judgments_and_images(
    study, make_manifest, settings, capsys
):
    call_command("import_items", str(make_manifest(n=6)), study=study.slug)
    assert Item.objects.filter(study=study).count() == 6
    assert (
        AutomatedJudgment.objects.filter(
            item__study=study, judge="vlm-a", judge_version="1"
        ).count()
        == 6
    )
    assert len(_stored_files(settings)) == 6
    item = Item.objects.get(item_id="item-1")
    assert item.attribute_value.value == "Nigerian" and item.image.read()[:4] == b"\x89PNG"
    assert "imported 6 items" in capsys.readouterr().out


def test_failed_import_writes_nothing_and_names_the_line(study, tmp_path, settings):
    write_image(tmp_path / "b" / "ok.png")
    path = write_manifest(
        tmp_path / "b",
        [
            manifest_line("a", image="ok.png"),
            manifest_line("b", image="ok.png", cue=None, mode="i2i"),
        ],
    )
    with pytest.raises(CommandError, match=r"line 2: mode"):
        call_command("import_items", str(path), study=study.slug)
    assert Item.objects.count() == 0 and _stored_files(settings) == []


def test_failure_while_writing_rolls_back_rows_and_files(
    study, make_manifest, settings, monkeypatch
):
    calls = {"n": 0}
    original = imports._item_from_record

    def fail_on_third(*args):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("disk full")
        return original(*args)

    monkeypatch.setattr(imports, "_item_from_record", fail_on_third)
    with pytest.raises(RuntimeError):
        imports.items_import(study=study, manifest=make_manifest(n=5))
    assert Item.objects.count() == 0 and _stored_files(settings) == []


def test_reimporting_an_item_id_is_refused_not_overwritten(imported_study, make_manifest):
    with pytest.raises(ManifestInvalid, match="already in study"):
        imports.items_import(study=imported_study, manifest=make_manifest(n=2, folder="again"))
    assert Item.objects.filter(study=imported_study).count() == 6


def test_unknown_study_is_a_clear_error(make_manifest):
    with pytest.raises(CommandError, match="unknown study 'nope'"):
        call_command("import_items", str(make_manifest()), study="nope")


def test_import_annotations_creates_unknown_annotators_without_password(imported_study, tmp_path):
    csv_path = tmp_path / "labels.csv"
    csv_path.write_text(
        "item_id,annotator,annotator_group,hard_refusal,cue\nitem-0,zoe,Korean,true,\nitem-1,zoe,Korean,false,erased\nitem-1,yan,US,false,retained\n"
    )
    call_command(
        "import_annotations", str(csv_path), study=imported_study.slug, create_annotators=True
    )
    zoe = Annotation.objects.filter(assignment__annotator__user__username="zoe")
    assert zoe.count() == 2 and zoe.get(assignment__item__item_id="item-0").hard_refusal
    user = zoe.first().assignment.annotator.user
    assert not user.has_usable_password() and user.annotator.group == "Korean"
    assert AnnotationHistory.objects.count() == 3


def test_import_annotations_never_overwrites_existing_answers(imported_study, tmp_path):
    csv_text = "item_id,annotator,annotator_group,hard_refusal,cue\nitem-0,zoe,,false,retained\n"
    imports.annotations_import(study=imported_study, csv_text=csv_text, create_annotators=True)
    with pytest.raises(ManifestInvalid, match="already has an answer"):
        imports.annotations_import(
            study=imported_study, csv_text=csv_text.replace("retained", "erased")
        )
    assert Annotation.objects.get().cue_label == "retained"


def test_import_annotations_unknown_item_is_refused(imported_study):
    with pytest.raises(ManifestInvalid, match="'ghost' is not in study"):
        imports.annotations_import(
            study=imported_study,
            csv_text="item_id,annotator,annotator_group,hard_refusal,cue\nghost,zoe,,false,retained\n",
        )
    assert Annotation.objects.count() == 0
