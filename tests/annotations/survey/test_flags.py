"""Broken-image flags reach staff: the review queue, its three actions, and exclusion from
every statistic."""

import io

import pandas as pd
import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from PIL import Image

from annotations import selectors, services
from annotations.exports import datasets as export_datasets
from annotations.models import Annotation, Assignment, Item, ItemReview
from scoring.metrics import document as metrics
from scoring.stats.study_metrics import ANNOTATION_COLUMNS, JUDGMENT_COLUMNS, study_metrics
from tests.support.django_fixtures import client_for, write_image

pytestmark = pytest.mark.django_db


def _answer(annotator, item, *, broken=False, note="", refusal=False):
    assignment = Assignment.objects.get(annotator=annotator, item=item)
    return services.annotation_submit(
        assignment=assignment,
        hard_refusal=refusal,
        cue_label=None if refusal else "retained",
        note=note,
        broken_image=broken,
    )


@pytest.fixture
def flagged(batch, annotators):
    """item-1 flagged by both annotators, item-2 by one; every other item answered plainly."""
    items = {i.item_id: i for i in Item.objects.filter(study=batch.study)}
    for item_id, item in items.items():
        for annotator in annotators[:2]:
            broken = item_id == "item-1" or (item_id == "item-2" and annotator == annotators[0])
            _answer(annotator, item, broken=broken, note="all grey" if broken else "")
    return items


def test_queue_lists_flagged_items_with_notes_and_counts(batch, annotators, flagged):
    waiting, queue = selectors.flag_queue(study=batch.study)
    assert waiting == 2
    by_id = {row["item_id"]: row for row in queue}
    assert by_id["item-1"]["open_flags"] == 2 and by_id["item-2"]["open_flags"] == 1
    assert {f["annotator"] for f in by_id["item-1"]["flags"]} == {"ann0", "ann1"}
    assert all(f["note"] == "all grey" for f in by_id["item-1"]["flags"])
    per_annotator = {
        r["annotator"]: r for r in selectors.flag_counts_by_annotator(study=batch.study)
    }
    assert per_annotator["ann0"]["flags"] == 2 and per_annotator["ann1"]["flags"] == 1
    assert per_annotator["ann0"]["answers"] == 6


def test_study_page_says_how_many_items_wait(batch, flagged, staff_client):
    page = staff_client.get(reverse("staff:study_detail", args=[batch.study.slug]))
    assert "Broken-image flags (2 waiting)" in page.content.decode()
    assert selectors.flag_queue_size(study=batch.study) == 2


def test_queue_answers_in_a_fixed_number_of_queries(
    batch, annotators, flagged, django_assert_max_num_queries
):
    with django_assert_max_num_queries(5):
        selectors.flag_queue(study=batch.study)


def test_dismiss_empties_the_queue_until_a_new_flag(batch, annotators, flagged, staff_user):
    review = services.item_flags_dismiss(item=flagged["item-1"], user=staff_user, reason="fine")
    assert review.action == "dismiss" and review.open_flags == 2 and review.acted_by == staff_user
    assert [r["item_id"] for r in selectors.flag_queue(study=batch.study)[1]] == ["item-2"]
    assert Item.objects.get(item_id="item-1").excluded_at is None
    # An annotator flags it again (an edit): back in the queue with that one open flag.
    _answer(annotators[0], flagged["item-1"], broken=True, note="still grey, really")
    row = next(r for r in selectors.flag_queue(study=batch.study)[1] if r["item_id"] == "item-1")
    assert row["open_flags"] == 1 and row["all_flags"] == 2


def _reference_metrics(batch, drop_item_id):
    """study_metrics on the frames with the item's rows dropped by hand: an independent path."""
    annotations = pd.DataFrame(selectors.annotation_rows(study=batch.study))
    judgments = pd.DataFrame(selectors.judgment_rows(study=batch.study))
    annotations = annotations[annotations["item_id"] != drop_item_id]
    judgments = judgments[judgments["item_id"] != drop_item_id]
    columns_a, columns_j = ANNOTATION_COLUMNS, JUDGMENT_COLUMNS
    return study_metrics(
        annotations.reindex(columns=columns_a).reset_index(drop=True),
        judgments.reindex(columns=columns_j).reset_index(drop=True),
        n_resamples=200,
        seed=0,
    )


def _comparable(document):
    return {key: document[key] for key in ("rates", "agreement")}


def test_excluded_item_leaves_every_statistic_and_the_export_counts_it(
    batch, annotators, flagged, staff_user
):
    expected = _reference_metrics(batch, "item-1")
    before = metrics.metrics_document_cached(study=batch.study, n_resamples=200)
    review = services.item_exclude(
        item=flagged["item-1"], reason="grey in every copy", user=staff_user
    )
    assert review.action == "exclude" and review.reason == "grey in every copy"
    document = metrics.metrics_document_cached(study=batch.study, n_resamples=200)
    assert document["generated_at"] != before["generated_at"], "the cache missed the exclusion"
    assert _comparable(document) == _comparable(expected) != _comparable(before)
    assert document["counts"]["excluded"] == 1
    assert document["excluded_items"] == [
        {"item_id": "item-1", "reason": "grey in every copy", "excluded_at": review.acted_at}
    ]
    rows = export_datasets.annotation_export(study=batch.study).rows
    assert "item-1" not in {r["item_id"] for r in rows} and len(rows) == 10
    assert "item-1" not in {r["item_id"] for r in selectors.judgment_rows(study=batch.study)}
    # Out of the queue; its answers are kept, not deleted.
    assert "item-1" not in [r["item_id"] for r in selectors.flag_queue(study=batch.study)[1]]
    assert Annotation.objects.filter(assignment__item__item_id="item-1").count() == 2
    # Included again: its answers count again.
    services.item_include(item=flagged["item-1"], user=staff_user)
    assert len(export_datasets.annotation_export(study=batch.study).rows) == 12
    assert [r.action for r in ItemReview.objects.order_by("id")] == ["exclude", "include"]


def test_exclude_needs_a_reason_and_withdraws_open_assignments(batch, annotators, staff_user):
    item = Item.objects.get(item_id="item-3")
    with pytest.raises(ValidationError, match="reason"):
        services.item_exclude(item=item, reason="  ", user=staff_user)
    assert Item.objects.get(pk=item.pk).excluded_at is None and ItemReview.objects.count() == 0
    _answer(annotators[0], item)
    review = services.item_exclude(item=item, reason="duplicate", user=staff_user)
    assert review.closed_assignments == 1
    open_rows = Assignment.objects.filter(item=item, is_active=True, answered_at__isnull=True)
    assert not open_rows.exists()
    with pytest.raises(ValidationError, match="already excluded"):
        services.item_exclude(item=item, reason="again", user=staff_user)


def test_replace_image_stores_the_new_file_and_records_the_old(
    batch, annotators, flagged, staff_user, tmp_path
):
    item = flagged["item-1"]
    old_name, old_sha = item.image.name, item.image_sha256
    path = write_image(tmp_path / "fixed.png", colour=(1, 2, 3), size=(40, 40))
    review = services.item_image_replace(item=item, image=path, user=staff_user, reason="re-render")
    item.refresh_from_db()
    assert item.image.name != old_name and item.image_sha256 != old_sha
    assert Image.open(item.image).size == (40, 40)
    assert review.previous_image == old_name and review.previous_image_sha256 == old_sha
    assert review.open_flags == 2
    assert "item-1" not in [r["item_id"] for r in selectors.flag_queue(study=batch.study)[1]]


def test_replace_with_a_broken_file_changes_nothing(batch, flagged, staff_user, tmp_path):
    item = flagged["item-1"]
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image")
    with pytest.raises(ValidationError, match="not an image we can read"):
        services.item_image_replace(item=item, image=bad, user=staff_user)
    item.refresh_from_db()
    assert item.image_sha256 == flagged["item-1"].image_sha256 and not ItemReview.objects.exists()


# --- the page -------------------------------------------------------------------------------


def test_flag_queue_page_shows_notes_counts_and_acts(batch, annotators, flagged, staff_client):
    url = reverse("staff:flag_queue", args=[batch.study.slug])
    page = staff_client.get(url).content.decode()
    assert "item-1" in page and "all grey" in page and "2 open flags" in page
    assert "ann0" in page
    item = flagged["item-1"]
    response = staff_client.post(reverse("staff:item_exclude", args=[item.pk]), {"reason": ""})
    assert response["Location"] == url and Item.objects.get(pk=item.pk).excluded_at is None
    staff_client.post(reverse("staff:item_exclude", args=[item.pk]), {"reason": "corrupt"})
    assert Item.objects.get(pk=item.pk).excluded_reason == "corrupt"
    staff_client.post(reverse("staff:item_flags_dismiss", args=[flagged["item-2"].pk]), {})
    buffer = io.BytesIO()
    Image.new("RGB", (24, 24), (9, 9, 9)).save(buffer, "PNG")
    buffer.name = "new.png"
    buffer.seek(0)
    staff_client.post(
        reverse("staff:item_image_replace", args=[flagged["item-3"].pk]), {"image": buffer}
    )
    actions = sorted(ItemReview.objects.values_list("action", flat=True))
    assert actions == ["dismiss", "exclude", "replace_image"]
    page = staff_client.get(url).content.decode()
    assert "No flags waiting" in page and "corrupt" in page and "Include again" in page


def test_annotators_cannot_act_on_flags(batch, annotators, flagged):
    client = client_for(annotators[0])
    item = flagged["item-1"]
    assert client.get(reverse("staff:flag_queue", args=[batch.study.slug])).status_code == 403
    for name in ("item_exclude", "item_flags_dismiss", "item_include", "item_image_replace"):
        assert (
            client.post(reverse(f"staff:{name}", args=[item.pk]), {"reason": "x"}).status_code
            == 403
        )
    assert not ItemReview.objects.exists()
