"""Adjudication: the queue of disputed items, recorded decisions with history, who may see it,
and metrics on adjudicated labels (docs/annotation.md#adjudication)."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotations import services
from annotations.adjudication import disputes as adjudication
from annotations.models import Adjudication, Assignment, Item
from scoring.metrics import document as metrics
from tests.support.django_fixtures import client_for

pytestmark = pytest.mark.django_db


def _answer(annotator, item, cue="retained"):
    assignment = Assignment.objects.get(annotator=annotator, item=item)
    refused = cue == "refused"
    return services.annotation_submit(
        assignment=assignment,
        hard_refusal=refused,
        cue_label=None if refused else cue,
        note=f"{annotator} on {item.item_id}",
    )


@pytest.fixture
def disputed(batch, annotators):
    """Both annotators answer every item 'retained', except item-1 where ann0 says 'erased'.
    The judge said 'refused' for item-0 and item-5 (the fixture manifest)."""
    items = {i.item_id: i for i in Item.objects.filter(study=batch.study)}
    for item_id, item in items.items():
        _answer(annotators[0], item, "erased" if item_id == "item-1" else "retained")
        _answer(annotators[1], item)
    return items


def test_queue_holds_annotator_and_judge_disagreements(batch, disputed):
    queue = adjudication.adjudication_queue(study=batch.study)
    by_id = {d.item_id: d for d in queue}
    assert set(by_id) == {"item-0", "item-1", "item-5"}
    assert by_id["item-1"].annotators_disagree and not by_id["item-1"].judges_disagree
    assert by_id["item-0"].judges_disagree and not by_id["item-0"].annotators_disagree
    assert by_id["item-1"].human_labels == {"erased": 1, "retained": 1}
    # A close split comes before a unanimous answer the judges contradict (same value sizes).
    assert queue[0].item_id == "item-1"


def test_attribute_values_with_few_items_come_first():
    def dispute(item_id, value_items, human):
        return adjudication.dispute_for(
            item_pk=1,
            item_id=item_id,
            attribute_value="v",
            value_items=value_items,
            human=human,
            judges=[],
        )

    rows = [
        dispute("a", 50, ["refused", "retained"]),
        dispute("b", 3, ["retained", "retained", "erased"]),
        dispute("c", 3, ["retained", "erased"]),
    ]
    assert [d.item_id for d in sorted(rows, key=lambda d: d.sort_key)] == ["c", "b", "a"]
    assert (
        adjudication.dispute_for(
            item_pk=1,
            item_id="x",
            attribute_value="v",
            value_items=1,
            human=["retained"],
            judges=[],
        )
        is None
    )


def test_decisions_need_a_reason_and_keep_history(batch, disputed, staff_user):
    item = disputed["item-1"]
    with pytest.raises(ValidationError, match="reason"):
        adjudication.adjudication_record(
            item=item, hard_refusal=False, cue_label="erased", reason=" ", user=staff_user
        )
    assert not Adjudication.objects.exists()
    first = adjudication.adjudication_record(
        item=item, hard_refusal=False, cue_label="erased", reason="markers gone", user=staff_user
    )
    again = adjudication.adjudication_record(
        item=item, hard_refusal=False, cue_label="erased", reason="markers gone", user=staff_user
    )
    assert again.pk == first.pk and first.revision == 1
    second = adjudication.adjudication_record(
        item=item, hard_refusal=True, cue_label=None, reason="on a second look", user=staff_user
    )
    assert second.revision == 2
    assert list(item.adjudications.values_list("revision", flat=True)) == [2, 1]
    assert "item-1" not in {d.item_id for d in adjudication.adjudication_queue(study=batch.study)}
    assert adjudication.adjudicated_labels(study=batch.study) == {
        "item-1": {"hard_refusal": True, "cue": None}
    }


def test_annotators_never_see_the_queue_unless_granted(batch, disputed, annotators, client):
    study, item = batch.study, disputed["item-1"]
    queue_url = reverse("adjudication:queue", args=[study.slug])
    item_url = reverse("adjudication:item", args=[study.slug, item.pk])
    assert client.get(queue_url).status_code == 302  # to the login page
    outsider = client_for(annotators[0])
    assert outsider.get(queue_url).status_code == 403
    assert outsider.get(item_url).status_code == 403
    assert outsider.post(item_url, {"label": "erased", "reason": "x"}).status_code == 403
    assert not Adjudication.objects.exists()
    # The image of an item they were not assigned stays hidden until they are granted.
    other = services.annotator_create(username="judge-person", password="pw-for-tests-1")
    other_client = client_for(other)
    image_url = reverse("annotations:item_image", args=[item.pk])
    assert other_client.get(image_url).status_code == 404
    adjudication.adjudicator_grant(study=study, annotator=other, user=None)
    page = other_client.get(queue_url)
    assert page.status_code == 200 and "item-1" in page.content.decode()
    detail = other_client.get(item_url).content.decode()
    assert "ann0 on item-1" in detail and "vlm-a" in detail  # unblinded: notes and judges
    assert other_client.get(image_url).status_code == 200
    assert other_client.get(reverse("adjudication:queue", args=["no-such"])).status_code == 404


def test_item_of_another_study_is_404(batch, disputed, staff_client):
    other = services.study_create(name="Other", slug="other")
    url = reverse("adjudication:item", args=[other.slug, disputed["item-1"].pk])
    assert staff_client.get(url).status_code == 404


def test_posting_a_decision_records_it_and_moves_on(batch, disputed, staff_client):
    study, item = batch.study, disputed["item-1"]
    url = reverse("adjudication:item", args=[study.slug, item.pk])
    bad = staff_client.post(url, {"label": "erased", "reason": ""})
    assert bad.status_code == 400 and not Adjudication.objects.exists()
    response = staff_client.post(url, {"label": "erased", "reason": "the markers are gone"})
    assert response.status_code == 302
    decision = Adjudication.objects.get()
    assert (decision.cue_label, decision.decided_by.username) == ("erased", "staff")


def test_metrics_on_adjudicated_labels(batch, disputed, staff_user, tmp_path):
    study = batch.study
    adjudication.adjudication_record(
        item=disputed["item-1"], hard_refusal=True, cue_label=None, reason="r", user=staff_user
    )
    pooled, _ = metrics.study_metric_frames(study=study)
    adjudicated, _ = metrics.study_metric_frames(study=study, labels="adjudicated")
    assert len(pooled) == 12 and len(adjudicated) == 11
    row = adjudicated[adjudicated["item_id"] == "item-1"].iloc[0]
    assert (row["annotator"], bool(row["hard_refusal"]), row["cue"]) == ("adjudicator", True, None)
    out = tmp_path / "m.json"
    call_command(
        "export_metrics",
        study=study.slug,
        out=out,
        labels="adjudicated",
        n_resamples=0,
        label_models="none",
    )
    document = json.loads(out.read_text())
    assert document["labels"]["source"] == "adjudicated"
    assert document["labels"]["n_items_adjudicated"] == 1
    dawid_skene, _ = metrics.study_metric_frames(study=study, labels="dawid-skene")
    assert len(dawid_skene) == 6 and set(dawid_skene["annotator"]) == {"dawid-skene"}


def test_export_metrics_rejects_an_unknown_label_source(batch, tmp_path):
    with pytest.raises(CommandError, match="labels"):
        call_command(
            "export_metrics",
            "--study",
            batch.study.slug,
            "--out",
            str(tmp_path / "x"),
            "--labels",
            "bogus",
        )
    assert not (tmp_path / "x").exists()


def test_dashboard_selector_and_download(batch, disputed, staff_client):
    url = reverse("metrics:study_statistics", args=[batch.study.slug])
    page = staff_client.get(url, {"labels": "adjudicated"})
    assert page.status_code == 200 and 'value="adjudicated" selected' in page.content.decode()
    bad = staff_client.get(url, {"labels": "bogus"})
    assert bad.status_code == 400 and b"unknown label source" in bad.content
    download = staff_client.get(
        reverse("metrics:export_metrics", args=[batch.study.slug]), {"labels": "adjudicated"}
    )
    assert json.loads(download.content)["labels"]["source"] == "adjudicated"
    api = reverse("metrics:study_metrics", args=[batch.study.slug])
    assert staff_client.get(api, {"labels": "mace"}).json()["labels"]["source"] == "mace"
    assert staff_client.get(api, {"labels": "bogus"}).status_code == 400


def test_queue_and_item_view_answer_in_fixed_queries(
    batch, disputed, staff_user, django_assert_num_queries
):
    with django_assert_num_queries(4):  # answers, judgments, value sizes, items
        adjudication.adjudication_queue(study=batch.study)
    adjudication.adjudication_record(
        item=disputed["item-1"], hard_refusal=True, cue_label=None, reason="r", user=staff_user
    )
    with django_assert_num_queries(3):  # answers, judgments, decisions (with their users)
        evidence = adjudication.item_evidence(item=disputed["item-1"])
        assert [d.decided_by.username for d in evidence["decisions"]] == ["staff"]
