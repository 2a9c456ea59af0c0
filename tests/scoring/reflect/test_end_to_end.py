"""import_face_set → run_reflect → reflect_report against scripted models on the loopback
server: every figure follows from the rule by hand."""

import json
import random

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from scipy.spatial.distance import jensenshannon

from generation.models import FaceSet
from scoring.reflect.models import ReflectAnswer
from scoring.stats.reflect.vocabulary import GENDERS, GROUPS, RACES
from tests.scoring.reflect.conftest import report_of, run_reflect
from tests.scoring.reflect.fakes import always_refuses, answers_by_position, prefers_rank

pytestmark = pytest.mark.django_db
TEMPLATES = 2  # 2 occupations × 1 template


def expected_win_rates(rank):
    """By hand: g beats h when g comes first in rank; marginals over cross-level pairs."""
    position = {g: i for i, g in enumerate(rank)}

    def rate(members):
        won = total = 0
        for g in members:
            for h in range(10):
                if h in members:
                    continue
                total += 1
                won += position[g] < position[h]
        return won / total

    race = {r: rate({g for g, (gr, _) in enumerate(GROUPS) if gr == r}) for r in RACES}
    gender = {s: rate({g for g, (_, gs) in enumerate(GROUPS) if gs == s}) for s in GENDERS}
    race_gender = {f"{r}|{s}": rate({g}) for g, (r, s) in enumerate(GROUPS)}
    return race, gender, race_gender


def test_rule_that_prefers_groups_in_a_fixed_order(face_set, serve, tmp_path):
    rank = list(range(10))
    random.Random(7).shuffle(rank)
    server = serve(prefers_rank(rank))
    run_reflect(server)
    report = report_of(tmp_path)
    model = report["models"]["fake-vlm"]
    race, gender, race_gender = expected_win_rates(rank)
    for scenario in ("income", "education", "perceived_safety"):
        block = model["2afc"][scenario]
        assert block["attempted"] == 45 * TEMPLATES
        assert block["kept"] == 45 * TEMPLATES
        assert block["discarded_invalid"] == 0 and block["discarded_inconsistent"] == 0
        assert block["pol"] == 0.5 and block["ext"] == 1.0  # every cell is 0 or 1
        assert block["first_position_rate"] == 0.5  # each pair shown both ways, same winner
        assert block["win_rate"]["race"] == pytest.approx(race)
        assert block["win_rate"]["gender"] == pytest.approx(gender)
        assert block["win_rate"]["race_gender"] == pytest.approx(race_gender)
    salary = model["mcq"]["salary"]
    assert salary["valid"] == 10 * TEMPLATES
    # Women answer A ($10,000 midpoint), men F ($110,000): male mean gap = 11 - 1 = 10.
    assert salary["mean_gap"]["gender"]["male"] == pytest.approx(10.0)
    assert salary["mean_gap"]["race"]["Black"] == pytest.approx(0.0)
    jsd_gender = jensenshannon([1, 0, 0, 0, 0, 0], [0.5, 0, 0, 0, 0, 0.5], base=2) ** 2
    assert salary["jsd"]["gender"]["female"] == pytest.approx(jsd_gender)
    assert salary["jsd"]["race"]["Asian"] == pytest.approx(0.0)
    assert model["mcq"]["education"]["mean_gap"]["gender"]["male"] == pytest.approx(3.0)
    assert len(server.requests) == 3 * 90 * TEMPLATES + 2 * 10 * TEMPLATES


def test_rule_that_answers_by_position(face_set, serve, tmp_path):
    run_reflect(serve(answers_by_position), tasks="2afc")
    block = report_of(tmp_path)["models"]["fake-vlm"]["2afc"]["income"]
    assert block["attempted"] == 45 * TEMPLATES
    assert block["kept"] == 0
    assert block["discarded_inconsistent"] == 45 * TEMPLATES
    assert block["first_position_rate"] == 1.0
    assert block["pol"] is None and block["ext"] is None
    assert all(v is None for v in block["win_rate"]["race"].values())


def test_rule_that_always_refuses(face_set, serve, tmp_path):
    run_reflect(serve(always_refuses))
    model = report_of(tmp_path)["models"]["fake-vlm"]
    block = model["2afc"]["perceived_safety"]
    assert block["kept"] == 0
    assert block["discarded_invalid"] == block["discarded_refusal"] == 45 * TEMPLATES
    assert block["first_position_rate"] is None
    assert model["mcq"]["salary"]["valid"] == 0
    assert model["mcq"]["salary"]["refusals"] == 10 * TEMPLATES
    stored = ReflectAnswer.objects.filter(task="2afc")
    assert set(stored.values_list("status", flat=True)) == {"refusal"}
    assert stored.first().raw_answer.startswith("I'm sorry")


def test_rerun_asks_nothing_again(face_set, serve, tmp_path):
    server = serve(prefers_rank(list(range(10))))
    run_reflect(server)
    asked = len(server.requests)
    first = report_of(tmp_path)
    run_reflect(server)
    assert len(server.requests) == asked
    assert ReflectAnswer.objects.count() == asked
    second = report_of(tmp_path)
    assert first["models"] == second["models"]


def test_every_answer_row_keeps_prompt_model_decoding_and_timing(face_set, serve):
    run_reflect(
        serve(prefers_rank(list(range(10)))), tasks="mcq", temperature=0.7, samples=3, seed=11
    )
    answers = ReflectAnswer.objects.filter(task="mcq")
    assert answers.count() == 2 * 10 * TEMPLATES * 3
    row = answers.get(request_key="mcq/salary/original/CEO/t0/White|male/s2")
    assert row.prompt == face_set.protocol["mcq"]["salary"]["text"]
    assert (
        row.decoding["temperature"] == 0.7 and row.decoding["seed"] == 13 and row.decoding["n"] == 1
    )
    assert row.raw_answer == "F" and row.parsed_value == "F" and row.status == "valid"
    assert row.model_version == "openai:fake-vlm@fake-vlm" and row.latency_s > 0
    assert row.run.decoding == {"temperature": 0.7, "samples": 3, "seed": 11}


def test_inline_endpoint_and_configured_name_are_both_accepted(face_set, serve, settings, tmp_path):
    server = serve(prefers_rank(list(range(10))))
    settings.ACRB_VLM_MODELS = {
        "loop": {
            "type": "openai",
            "endpoint": server.base_url,
            "model": "served-id",
            "concurrency": 4,
        }
    }
    call_command(
        "run_reflect", "--set", "Faces A", "--model", "loop", "--tasks", "mcq", verbosity=0
    )
    assert set(report_of(tmp_path)["models"]) == {"loop"}
    assert server.requests[0]["model"] == "served-id"
    url = server.requests[0]["messages"][-1]["content"][0]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    with pytest.raises(CommandError, match="unknown VLM model 'nope'"):
        call_command("run_reflect", "--set", "Faces A", "--model", "nope")
    with pytest.raises(CommandError, match="unknown tasks"):
        call_command("run_reflect", "--set", "Faces A", "--model", "loop", "--tasks", "2afc,vqa")


def test_explanation_variant_stores_the_rationale(face_set, serve, tmp_path):
    def rule(request):
        from tests.support.openai_server import completion

        return completion("B\nLooks like a mid-career professional.")

    run_reflect(serve(rule), tasks="mcq", explain=True, model="explainer")
    row = ReflectAnswer.objects.filter(task="mcq").first()
    assert row.explain and row.parsed_value == "B" and row.rationale.startswith("Looks like")
    assert report_of(tmp_path)["models"]["explainer"]["mcq"]["salary"]["valid"] == 10 * TEMPLATES


def test_export_then_reanalyse_without_the_model(face_set, serve, tmp_path):
    run_reflect(serve(prefers_rank([3, 1, 4, 0, 5, 9, 2, 6, 8, 7])))
    dump = tmp_path / "answers.jsonl"
    call_command("export_reflect_run", "--set", "Faces A", "--out", str(dump), verbosity=0)
    lines = dump.read_text().splitlines()
    assert len(lines) == ReflectAnswer.objects.count()
    assert {"prompt", "raw_answer", "decoding", "model_version", "latency_s"} <= set(
        json.loads(lines[0])
    )
    from_db = report_of(tmp_path, resamples=50)
    out = tmp_path / "from_dump"
    call_command(
        "reflect_report",
        "--answers",
        str(dump),
        "--out",
        str(out),
        "--resamples",
        "50",
        "--no-figures",
        verbosity=0,
    )
    from_dump = json.loads((out / "report.json").read_text())["reflect"]
    assert from_dump["models"] == from_db["models"]
    assert from_dump["spearman"] == from_db["spearman"]


def test_report_writes_figures_and_their_data(face_set, serve, tmp_path):
    run_reflect(serve(prefers_rank(list(range(10)))), tasks="2afc,mcq")
    report_of(tmp_path, figures=True)
    figures = tmp_path / "report" / "figures"
    for scenario in ("income", "education", "perceived_safety"):
        for ext in ("png", "svg", "csv"):
            assert (figures / f"win_matrix__fake-vlm__{scenario}.{ext}").stat().st_size > 0
    for ext in ("png", "svg", "csv"):
        assert (figures / f"jsd__fake-vlm.{ext}").stat().st_size > 0
    heat = (figures / "win_matrix__fake-vlm__income.csv").read_text().splitlines()
    assert heat[0] == "model,scenario,group,opponent,win_rate" and len(heat) == 101
    assert (tmp_path / "report" / "tables" / "win_rates.csv").exists()


def test_bad_layout_is_a_clear_command_error_and_imports_nothing(db, face_folder):
    (face_folder / "nurse" / "t0" / "Middle-Eastern_female.png").rename(
        face_folder / "nurse" / "t0" / "Middle Eastern_female.png"
    )
    with pytest.raises(CommandError) as caught:
        call_command("import_face_set", str(face_folder), "--set", "Broken")
    assert "nothing was imported" in str(caught.value)
    assert "unknown race 'Middle Eastern'" in str(caught.value)
    assert "nurse/t0/: missing Middle-Eastern_female" in str(caught.value)
    assert not FaceSet.objects.exists()


def test_editing_the_protocol_starts_a_new_run_and_keeps_the_old_texts(face_set, serve):
    server = serve(prefers_rank(list(range(10))))
    run_reflect(server, tasks="mcq")
    first = face_set.runs.get()
    old_text = face_set.protocol["mcq"]["salary"]["text"]
    face_set.protocol["mcq"]["salary"]["text"] = old_text.replace(
        "annual salary", "annual salary (USD)"
    )
    face_set.save()
    run_reflect(server, tasks="mcq")
    second = face_set.runs.exclude(pk=first.pk).get()
    assert second.prompt_version != first.prompt_version
    assert second.label.startswith("fake-vlm@")
    assert first.answers.filter(item="salary").first().prompt == old_text
    assert "(USD)" in second.answers.filter(item="salary").first().prompt
    assert first.answers.count() == second.answers.count() == 40


def test_answer_rows_is_one_query_and_option_probabilities_are_opt_in(
    face_set, serve, django_assert_num_queries
):
    from scoring.reflect import selectors
    from tests.support.openai_server import completion

    server = serve(lambda request: completion("B", top_logprobs={"A": 0.25, "B": 0.75}))
    run_reflect(server, tasks="mcq", model="plain")
    assert "logprobs" not in server.requests[0]
    with django_assert_num_queries(1):
        rows = list(selectors.answer_rows(face_set=face_set))
    assert len(rows) == 40 and rows[0]["option_probs"] is None
    face_set.runs.all().delete()
    from django.core.management import call_command

    call_command(
        "run_reflect",
        "--set",
        "Faces A",
        "--endpoint",
        server.base_url,
        "--api-model",
        "probs",
        "--tasks",
        "mcq",
        "--logprobs",
        verbosity=0,
    )
    row = ReflectAnswer.objects.filter(task="mcq").first()
    assert row.option_probs["B"] == pytest.approx(0.75)


def test_reflect_report_errors_are_clear(face_set, serve, tmp_path):
    run_reflect(serve(prefers_rank(list(range(10)))), tasks="2afc")
    dump = tmp_path / "answers.jsonl"
    call_command("export_reflect_run", "--set", "Faces A", "--out", str(dump), verbosity=0)
    out = str(tmp_path / "out")
    with pytest.raises(CommandError, match="no report written: duplicate 2AFC rows"):
        call_command("reflect_report", "--answers", str(dump), str(dump), "--out", out)
    (tmp_path / "bad.jsonl").write_text('{"model": "m"}\n')
    with pytest.raises(CommandError, match="bad.jsonl:1: missing request_key"):
        call_command("reflect_report", "--answers", str(tmp_path / "bad.jsonl"), "--out", out)
    with pytest.raises(CommandError, match="unknown face set 'Nope'"):
        call_command("reflect_report", "--set", "Nope", "--out", out)


def test_reimport_refuses_to_change_an_image_runs_asked_about_even_as_image_b(
    face_set, face_folder
):
    """An image shown only second (image_b) has been asked about too: replacing it would
    silently change what stored answers mean."""
    from PIL import Image

    from generation.faces.services import race_file_stem
    from scoring.reflect import services
    from scoring.reflect.models import FaceImage, ReflectAnswer, ReflectRun

    first, second = FaceImage.objects.filter(template__face_set=face_set)[:2]
    run = ReflectRun.objects.create(
        face_set=face_set, model_name="m", prompt_version="v1", identity="one-run", label="m"
    )
    ReflectAnswer.objects.create(
        run=run,
        request_key="k",
        task="2afc",
        item="income",
        image_a=first,
        image_b=second,
        prompt="p",
        model_version="m",
        status="valid",
    )
    template = second.template
    path = face_folder / template.occupation / template.name
    [target] = path.glob(f"{race_file_stem(second.race, second.gender)}.*")
    Image.new("RGB", (16, 16), (1, 2, 3)).save(target)  # a different image for image_b only
    with pytest.raises(ValueError, match="runs have already asked about"):
        services.face_set_import(folder=face_folder, name=face_set.name)
