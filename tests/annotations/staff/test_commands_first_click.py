"""Issue 21 §1.6: imports and commands a new user ran into."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotations import policies, selectors, services
from annotations.imports import importers
from annotations.imports.manifest import ManifestInvalid
from annotations.models import Annotation, Batch, Item, Study
from tests.support.django_fixtures import manifest_line, write_image, write_manifest

pytestmark = pytest.mark.django_db


def test_a_failed_import_with_create_leaves_no_empty_study(tmp_path):
    path = write_manifest(tmp_path / "b", [manifest_line("a", image="missing.png")])
    with pytest.raises(CommandError, match="nothing was imported|missing.png"):
        call_command("import_items", str(path), study="fresh", create=True)
    assert not Study.objects.filter(slug="fresh").exists()


def test_every_manifest_problem_is_listed_at_once_mode_and_clash_included(imported_study, tmp_path):
    write_image(tmp_path / "b" / "ok.png")
    path = write_manifest(
        tmp_path / "b",
        [
            manifest_line("item-0", image="ok.png"),  # already in the study
            manifest_line("b", image="ok.png", mode="i2i", source_image="ok.png"),  # mode
            manifest_line("c", image="gone.png"),  # a line of its own that is bad
        ],
    )
    with pytest.raises(ManifestInvalid) as caught:
        importers.items_import(study=imported_study, manifest=path)
    fields = {(error.line, error.field) for error in caught.value.errors}
    assert (1, "item_id") in fields and (2, "mode") in fields
    assert any(line == 3 for line, _ in fields)


def test_every_labels_problem_is_listed_at_once_unknown_item_and_annotator_included(
    imported_study,
):
    csv_text = (
        "item_id,annotator,annotator_group,hard_refusal,cue\n"
        "ghost,zoe,,false,retained\n"  # unknown item, unknown annotator
        "item-1,zoe,,maybe,retained\n"  # a bad value
    )
    with pytest.raises(ManifestInvalid) as caught:
        importers.annotations_import(study=imported_study, csv_text=csv_text)
    text = str(caught.value)
    assert "'ghost' is not in study" in text and "hard_refusal" in text
    assert "unknown annotator(s): zoe" in text
    assert Annotation.objects.count() == 0


def test_export_metrics_to_a_missing_folder_fails_in_one_line_before_computing(
    imported_study, tmp_path, monkeypatch
):
    import scoring.management.commands.export_metrics as command

    def never(**kwargs):
        raise AssertionError("computed before checking --out")

    monkeypatch.setattr(command, "metrics_document", never)
    out = tmp_path / "missing" / "dir" / "x.json"
    with pytest.raises(CommandError, match=r"^--out .*x\.json: folder .*dir does not exist$"):
        call_command("export_metrics", study=imported_study.slug, out=out)


def test_create_batch_lists_its_policies_readably(capsys, study):
    with pytest.raises(CommandError) as caught:
        call_command(
            "create_batch",
            "--study",
            study.slug,
            "--name",
            "x",
            "--annotators",
            "all",
            "--policy",
            "bad",
        )
    assert "Policy" not in str(caught.value) and "'k_overlap'" in str(caught.value)


def test_an_impossible_expertise_batch_is_refused_up_front_with_the_group_named(
    imported_study, annotators
):
    # ann0 is the one Korean annotator; k=2 needs two of them for the Korean items
    with pytest.raises(policies.PolicyError, match="group 'Korean' has 1 annotator"):
        services.batch_create(
            request=services.batch_request_build(
                study=imported_study,
                name="e",
                policy=Batch.Policy.EXPERTISE,
                annotators=annotators,
                overlap_k=2,
                seed=1,
            )
        )
    assert not Batch.objects.exists()


def _expertise_form(annotators) -> dict:
    """The new-batch form's fields for an expertise batch of k=2 over ``annotators``."""
    return {
        "name": "e",
        "policy": "expertise",
        "overlap_k": 2,
        "gold_per_annotator": 0,
        "annotators": [a.pk for a in annotators],
    }


def test_the_batch_form_refuses_an_impossible_expertise_batch_and_shows_errors_once(
    imported_study, annotators, staff_client
):
    url = reverse("staff:batch_create", args=[imported_study.slug])
    form = _expertise_form(annotators)
    response = staff_client.post(url, form)
    assert response.status_code == 400
    text = response.content.decode()
    assert text.count("group &#x27;Korean&#x27; has 1 annotator(s) selected") == 1
    response = staff_client.post(url, {**form, "policy": "k_overlap", "overlap_k": 9})
    assert response.content.decode().count("overlap k=9 needs at least 9 annotators") == 1


def test_an_item_that_cannot_be_placed_is_named_by_its_item_id(imported_study, annotators):
    services.batch_create(
        request=services.batch_request_build(
            study=imported_study,
            name="a",
            policy=Batch.Policy.K_OVERLAP,
            annotators=annotators[:2],
            overlap_k=2,
            seed=1,
        )
    )
    with pytest.raises(policies.PolicyError) as caught:
        services.batch_create(
            request=services.batch_request_build(
                study=imported_study,
                name="b",
                policy=Batch.Policy.K_OVERLAP,
                annotators=annotators[:2],
                overlap_k=2,
                seed=1,
            )
        )
    message = str(caught.value)
    assert message.startswith("item 'item-") and "fewer than 2 annotators" in message
    assert json.dumps(list(Item.objects.values_list("pk", flat=True)))  # ids exist, not shown


def test_the_expertise_check_counts_only_the_items_the_batch_would_give(
    imported_study, annotators, staff_client
):
    korean = list(
        Item.objects.filter(study=imported_study, attribute_value__value="Korean").values_list(
            "pk", flat=True
        )
    )
    Item.objects.filter(pk=korean[0]).update(intent="harmful")  # not opted in: never given
    counts = selectors.items_per_attribute_value(study=imported_study, item_ids=korean)
    assert counts == {"Korean": len(korean) - 1}
    # Nigerian ann1 alone is short for k=2 on the whole study, not on a Korean-only subset.
    url = reverse("staff:batch_create", args=[imported_study.slug])
    form = _expertise_form([annotators[1], annotators[3]])
    whole = staff_client.post(url, {**form, "preview": "1"}).content.decode()
    assert "group &#x27;Nigerian&#x27; has 1 annotator(s) selected" in whole
    subset = {**form, "preview": "1", "subset-attribute_value": "culture=Korean"}
    text = staff_client.post(url, subset).content.decode()
    assert "Expertise-matched batch impossible" not in text
