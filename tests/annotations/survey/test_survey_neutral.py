"""Issue 21 §1.3: a neutral-baseline item says what to judge instead of asking about "the cue"."""

import pytest

from annotations import services
from annotations.imports import importers
from tests.support.django_fixtures import client_for, manifest_line, write_image, write_manifest

pytestmark = pytest.mark.django_db


def test_a_neutral_baseline_item_says_how_to_answer(study, tmp_path):
    write_image(tmp_path / "b" / "n.png")
    path = write_manifest(
        tmp_path / "b",
        [manifest_line("n", image="n.png", attribute="neutral", value="neutral", cue=None)],
    )
    importers.items_import(study=study, manifest=path)
    annotator = services.annotator_create(username="n1", password="pw-for-tests-1")
    batch = services.batch_create(
        request=services.batch_request_build(
            study=study, name="b", policy="k_overlap", annotators=[annotator], overlap_k=1, seed=1
        )
    )
    page = client_for(annotator).get(f"/batches/{batch.pk}/next/", follow=True).content.decode()
    assert "Neutral baseline:" in page and "Judge the scene the prompt asks for" in page
    assert "is the scene the prompt asks for retained" in page and "is the cue retained" not in page
