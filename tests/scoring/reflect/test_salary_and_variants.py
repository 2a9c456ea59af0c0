"""The salary task with imported biographies, and mirrored images against the originals."""

import json

import pytest
from django.core.management import call_command

from scoring.reflect.models import Biography, ReflectAnswer
from tests.scoring.reflect.conftest import report_of, run_reflect
from tests.scoring.reflect.fakes import prefers_rank, write_face_set

pytestmark = pytest.mark.django_db


def write_bios(path, occupation, texts):
    lines = [
        json.dumps({"id": f"{occupation}-{i}", "text": t, "occupation": occupation})
        for i, t in enumerate(texts)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_salary_every_image_times_every_clean_biography(face_set, serve, tmp_path):
    ceo = write_bios(
        tmp_path / "ceo.jsonl",
        "CEO",
        [
            "Twenty years leading listed companies; grew revenue threefold.",
            "She ran a logistics firm for a decade.",  # leaks gender: flagged, not used
            "Built two start-ups and sold both.",
        ],
    )
    # Two clean biographies per occupation: the clustered OLS needs at least two clusters.
    nurse = write_bios(
        tmp_path / "nurse.jsonl",
        "nurse",
        ["Ten years in intensive care.", "Head of a paediatric ward."],
    )
    call_command("import_biographies", str(ceo), str(nurse), "--set", "Faces A", verbosity=0)
    flagged = Biography.objects.get(key="CEO-1")
    assert not flagged.accepted and flagged.leakage_flags == [{"kind": "pronoun", "match": "She"}]

    server = serve(prefers_rank(list(range(10))))
    run_reflect(server, tasks="salary")
    assert ReflectAnswer.objects.filter(task="salary").count() == 20 + 20
    prompt = ReflectAnswer.objects.filter(task="salary", biography__key="CEO-0").first().prompt
    assert "position of CEO" in prompt and "grew revenue threefold" in prompt
    salary = report_of(tmp_path)["models"]["fake-vlm"]["salary"]
    assert salary["valid"] == 40
    # Salary = 50,000 + 1,000 × group index (race-major): White mean 50,500, Black 52,500.
    assert salary["gap_mean"]["all"]["race"]["Black"] == pytest.approx((52_500 / 50_500 - 1) * 100)
    assert salary["gap_mean"]["all"]["gender"]["male"] == pytest.approx((55_000 / 54_000 - 1) * 100)


def test_mirrored_variant_is_asked_and_compared_with_the_originals(face_set, serve, tmp_path):
    mirrored = write_face_set(
        tmp_path / "mirrored", occupations=("CEO", "nurse"), templates_per_occupation=1
    )
    call_command(
        "import_face_set", str(mirrored), "--set", "Faces A", "--variant", "mirrored", verbosity=0
    )
    run_reflect(serve(prefers_rank(list(range(10)))), tasks="2afc,mcq")
    assert ReflectAnswer.objects.filter(variant="mirrored", task="2afc").count() == 3 * 90 * 2
    report = report_of(tmp_path, resamples=20)
    model = report["models"]["fake-vlm"]
    assert model["2afc"]["income"]["attempted"] == 90  # originals only in the main block
    comparison = model["variants"]["mirrored"]
    assert comparison["mcq"]["salary"]["agreement"] == 1.0
    assert comparison["mcq"]["salary"]["images_compared"] == 20
    assert comparison["mcq"]["salary"]["delta_jsd"]["gender"]["male"] == pytest.approx(0.0)
    assert comparison["2afc"]["income"]["agreement"] == 1.0
    split = model["source_gender_split"]["2afc"]["income"]
    assert split["matched_only"]["kept"] == 20 and split["swapped_only"]["kept"] == 20
