"""Stage I in the database: plan rows (skipped ones with reasons), attribute values, replanning."""

import pytest

from annotations.models import AttributeValue, Study
from generation import selectors, services
from generation.models import GenerationRequest, PlannedPrompt, StudyGenerator
from generation.prompts import load_taxonomy
from tests.generation.conftest import PLANNED_ROWS, SKIPPED_ROWS, api_config

pytestmark = pytest.mark.django_db


def test_plan_stores_planned_and_skipped_rows_with_reasons(planned_study):
    summary = selectors.plan_summary(study=planned_study)
    assert (summary.planned, summary.skipped) == (PLANNED_ROWS, SKIPPED_ROWS)
    assert summary.skip_reasons == [("no_person_slot", SKIPPED_ROWS)]
    row = PlannedPrompt.objects.get(study=planned_study, plan_id="p1:gender:female")
    assert row.text == "A woman cooking dinner in a kitchen"
    assert row.attribute_value.value == "female" and "woman" in row.attribute_value.cue_description
    skipped = PlannedPrompt.objects.get(study=planned_study, plan_id="p3:neutral")
    assert skipped.text == "" and skipped.attribute_value is None


def test_plan_creates_attribute_values_with_cues_and_neutral(planned_study):
    values = {(v.attribute, v.value): v for v in AttributeValue.objects.filter(study=planned_study)}
    assert set(values) == {
        ("neutral", "neutral"),
        ("gender", "male"),
        ("gender", "female"),
        ("gender", "non-binary"),
    }
    assert values[("neutral", "neutral")].is_neutral
    assert values[("neutral", "neutral")].cue_description == load_taxonomy().neutral_cue


def test_shipped_sources_with_a_seeded_sample(study):
    plan = services.study_plan_build(study=study, sample_size=5, sample_seed=3)
    values = len(load_taxonomy().values)
    assert PlannedPrompt.objects.filter(study=study).count() == 5 * (values + 1)
    assert plan.options["sample_size"] == 5 and plan.taxonomy["attributes"]
    again = Study.objects.create(name="again", slug="again")
    services.study_plan_build(study=again, sample_size=5, sample_seed=3)
    ids = lambda s: sorted(PlannedPrompt.objects.filter(study=s).values_list("plan_id", flat=True))  # noqa: E731
    assert ids(study) == ids(again)


def test_replanning_is_idempotent_and_refuses_to_change_rows_with_requests(
    planned_study, base_prompts_file, api_server
):
    before = list(PlannedPrompt.objects.filter(study=planned_study).values_list("pk", "plan_id"))
    services.study_plan_build(
        study=planned_study, base_prompts_path=base_prompts_file, attributes=["gender"]
    )
    assert (
        list(PlannedPrompt.objects.filter(study=planned_study).values_list("pk", "plan_id"))
        == before
    )
    services.study_generator_attach(study=planned_study, name="api", config=api_config(api_server))
    services.generation_requests_create(study=planned_study)
    with pytest.raises(services.PlanLocked):
        services.study_plan_build(
            study=planned_study, base_prompts_path=base_prompts_file, attributes=["culture"]
        )
    assert PlannedPrompt.objects.filter(study=planned_study).count() == PLANNED_ROWS + SKIPPED_ROWS


def test_unknown_attribute_is_a_clear_error(study):
    with pytest.raises(ValueError, match="unknown attributes"):
        services.study_plan_build(study=study, attributes=["height"])


def test_requests_are_created_once_per_prompt_generator_and_seed(planned_study, api_server):
    services.study_generator_attach(
        study=planned_study, name="api", config=api_config(api_server), seeds=[0, 1]
    )
    assert services.generation_requests_create(study=planned_study) == PLANNED_ROWS * 2
    assert services.generation_requests_create(study=planned_study) == 0
    services.study_generator_attach(
        study=planned_study, name="api", config=api_config(api_server), seeds=[2]
    )
    assert StudyGenerator.objects.get().seeds == [0, 1, 2]
    assert services.generation_requests_create(study=planned_study) == PLANNED_ROWS
    assert GenerationRequest.objects.count() == PLANNED_ROWS * 3


def test_generator_config_is_validated_and_frozen_once_used(planned_study, api_server):
    with pytest.raises(ValueError, match="unknown generator config keys"):
        services.study_generator_attach(
            study=planned_study,
            name="bad",
            config={"kind": "openai-images", "model": "m", "colour": 1},
        )
    with pytest.raises(ValueError, match="no generator named"):
        services.study_generator_attach(study=planned_study, name="not-configured")
    services.study_generator_attach(study=planned_study, name="api", config=api_config(api_server))
    services.generation_requests_create(study=planned_study)
    with pytest.raises(ValueError, match="already has requests"):
        services.study_generator_attach(
            study=planned_study, name="api", config=api_config(api_server, model="other")
        )


def test_study_setup_from_a_config_is_idempotent(base_prompts_file, api_server, db):
    raw = {
        "slug": "from-config",
        "name": "From a config",
        "base_prompts": base_prompts_file.name,
        "attributes": ["gender"],
        "seeds": [0, 1],
        "generators": [{"name": "api", **api_config(api_server)}],
    }
    config = services.StudyConfig.from_dict(raw, base_dir=base_prompts_file.parent)
    study = services.study_setup(config=config)
    services.study_setup(config=config)
    assert Study.objects.filter(slug="from-config").count() == 1
    assert PlannedPrompt.objects.filter(study=study, status="planned").count() == PLANNED_ROWS
    assert list(study.generators.values_list("name", "seeds")) == [("api", [0, 1])]
    with pytest.raises(ValueError, match="unknown study config keys"):
        services.StudyConfig.from_dict({**raw, "colour": "red"})


def test_deleting_a_study_deletes_its_plan_and_requests(planned_study, api_server):
    services.study_generator_attach(study=planned_study, name="api", config=api_config(api_server))
    services.generation_requests_create(study=planned_study)
    planned_study.delete()
    assert not PlannedPrompt.objects.exists() and not GenerationRequest.objects.exists()
