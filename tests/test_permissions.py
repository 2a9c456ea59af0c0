"""The permission matrix: every URL pattern of the project × {anonymous, annotator A,
annotator B, staff}, generated from the URLconf.

A URL added without a row in EXPECTED fails ``test_every_url_has_an_expectation``, so a new view
cannot ship without someone deciding who may reach it. Outcomes:

- LOGIN: anonymous is refused (a redirect to the login page, or 401/403 from the API);
- FORBIDDEN: 403 for a signed-in user without the right;
- MISSING: 404, the object is not theirs (annotators never learn another's assignment exists);
- ALLOWED: past the permission check (any answer below 500 except 401/403/404 and a redirect
  to the login page; e.g. 400 for an empty form is allowed);
- ALLOWED_OR_MISSING: staff asking for an object the fixture does not create (a face set);
- SIGNED_OUT: logging out, which sends everyone to the login page.

Django's admin (``admin:*``) checks staff itself; its index stands for it here.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotations import services
from annotations.models import Assignment, BackgroundJob, Item
from scoring.selectors import SCORING_JOB_KIND
from tests.support.django_fixtures import client_for

LOGIN, FORBIDDEN, MISSING, ALLOWED, ALLOWED_OR_MISSING, SIGNED_OUT = (
    "login",
    "forbidden",
    "missing",
    "allowed",
    "allowed_or_missing",
    "signed_out",
)
ROLES = ("anonymous", "annotator_a", "annotator_b", "staff")


def staff_only(method="get"):
    return method, (LOGIN, FORBIDDEN, FORBIDDEN, ALLOWED)


def staff_only_object(method="get"):
    """A staff page about an object the fixture does not create (REFLECT, face sets)."""
    return method, (LOGIN, FORBIDDEN, FORBIDDEN, ALLOWED_OR_MISSING)


# name -> (method, outcome for anonymous, annotator A, annotator B, staff).
# A owns the assignment, batch and item in the URLs; B is an annotator with none of them.
EXPECTED = {
    "login": ("get", (ALLOWED, ALLOWED, ALLOWED, ALLOWED)),
    "logout": ("post", (SIGNED_OUT, SIGNED_OUT, SIGNED_OUT, SIGNED_OUT)),
    "admin:index": ("get", (LOGIN, LOGIN, LOGIN, ALLOWED)),
    "api-schema": staff_only(),
    "api-docs": staff_only(),
    "favicon": ("get", (ALLOWED, ALLOWED, ALLOWED, ALLOWED)),
    "api:study_list": staff_only(),
    "api:study_detail": staff_only(),
    "api:study_items": staff_only(),
    "api:study_annotations": staff_only(),
    "api:study_judgments": staff_only(),
    "comparison:compare_models": staff_only(),
    "metrics:study_metrics": staff_only(),
    "metrics:study_statistics": staff_only(),
    "metrics:study_summary": staff_only(),
    "metrics:batch_plan": staff_only(),
    "metrics:study_judge_fairness": staff_only(),
    "design_validity:design_validity": staff_only(),
    "design_validity:design_validity_start": staff_only("post"),
    "scoring:study_judges": staff_only(),
    "scoring:judge_score": staff_only("post"),
    "scoring:threshold_calibrate": staff_only("post"),
    "scoring:review_items": staff_only(),
    "scoring:roc_figure": staff_only_object(),
    "scoring:job_progress": staff_only(),
    "generation:overview": staff_only(),
    "generation:plan_new": staff_only(),
    "generation:study_generation": staff_only(),
    "generation:study_plan": staff_only(),
    "generation:rephrasing_list": staff_only(),
    "generation:generator_attach": staff_only("post"),
    "generation:generation_start": staff_only("post"),
    "generation:generation_progress": staff_only(),
    "generation:request_list": staff_only(),
    "generation:face_set_list": staff_only(),
    "generation:face_set_detail": staff_only_object(),
    "generation:face_edit_accept": staff_only_object("post"),
    "generation:face_image": staff_only_object(),
    "reflect:face_set_list": staff_only(),
    # Recruitment: a link's own pages answer whoever holds the link; unknown links are 404s.
    # A's batch has no consent text, so A's consent page sends A on to the survey.
    "recruitment:invite": ("get", (MISSING, MISSING, MISSING, MISSING)),
    "recruitment:panel_entry": ("get", (MISSING, MISSING, MISSING, MISSING)),
    "recruitment:consent": ("get", (LOGIN, ALLOWED, MISSING, MISSING)),
    "recruitment:panel_complete": ("get", (LOGIN, MISSING, MISSING, MISSING)),
    "recruitment:staff_page": staff_only(),
    "recruitment:staff_batch_create": staff_only("post"),
    "recruitment:staff_consent_publish": staff_only("post"),
    "recruitment:staff_invites_create": staff_only("post"),
    "recruitment:staff_panel_link_create": staff_only("post"),
    "recruitment:staff_invite_revoke": staff_only_object("post"),
    "recruitment:staff_panel_link_close": staff_only_object("post"),
    "recruitment:staff_participant_release": staff_only_object("post"),
    "reflect:face_set_detail": staff_only_object(),
    "reflect:face_set_publish": staff_only_object("post"),
    "reflect:run_start": staff_only_object("post"),
    "reflect:run_answers": staff_only_object(),
    "reflect:report_refresh": staff_only_object("post"),
    "reflect:report_json": staff_only_object(),
    "reflect:report_document": staff_only_object(),
    "reflect:report_csv": staff_only_object(),
    "reflect:report_figure": staff_only_object(),
    "reflect:face_image": staff_only_object(),
    "report:study_report": staff_only(),
    "report:study_report_pdf": staff_only(),
    "report:study_report_json": staff_only(),
    "report:study_report_figure": staff_only_object(),
    "report:study_disparities": staff_only(),
    "report:study_safety": staff_only(),
    "staff:study_list": staff_only(),
    "staff:study_new": staff_only(),
    "staff:study_new_create": staff_only("post"),
    "staff:people": staff_only(),
    "staff:people_create": staff_only("post"),
    "staff:people_invites_create": staff_only("post"),
    "staff:annotator_access_reset": staff_only("post"),
    "staff:annotator_pause": staff_only("post"),
    "staff:annotator_resume": staff_only("post"),
    "staff:study_detail": staff_only(),
    "staff:study_audit_context": staff_only(),
    "metrics:rates_chart": staff_only(),
    "staff:batch_create": staff_only(),
    "staff:study_harmful_controls": staff_only("post"),
    "staff:items_upload": staff_only(),
    "staff:annotations_upload": staff_only("post"),
    "metrics:export_metrics": staff_only(),
    "staff:export_annotations": staff_only(),
    "staff:flag_queue": staff_only(),
    "staff:item_flags_dismiss": staff_only("post"),
    "staff:item_exclude": staff_only("post"),
    "staff:item_include": staff_only("post"),
    "staff:item_image_replace": staff_only("post"),
    "staff:batch_detail": staff_only(),
    "staff:batch_add_annotators": staff_only("post"),
    "staff:batch_reassign": staff_only("post"),
    "staff:job_detail": staff_only(),
    "quality:annotators": staff_only(),
    "quality:annotator": staff_only(),
    "quality:annotator_action": staff_only("post"),
    # Staff, or an annotator granted the study (tests/annotations/adjudication/test_adjudication.py).
    "adjudication:queue": staff_only(),
    "adjudication:item": staff_only(),
    "annotations:home": ("get", (LOGIN, ALLOWED, ALLOWED, ALLOWED)),
    "annotations:guidelines": ("get", (LOGIN, ALLOWED, ALLOWED, ALLOWED)),
    # The language switcher: anyone, also before log-in (an invite link's consent page).
    "annotations:language": ("post", (ALLOWED, ALLOWED, ALLOWED, ALLOWED)),
    "annotations:batch_next": ("get", (LOGIN, ALLOWED, MISSING, MISSING)),
    "annotations:assignment": ("get", (LOGIN, ALLOWED, MISSING, MISSING)),
    "annotations:answer": ("post", (LOGIN, ALLOWED, MISSING, MISSING)),
    "annotations:skip": ("post", (LOGIN, ALLOWED, MISSING, MISSING)),
    # The fixture's items are benign, and only a harmful control can be declined: 404 for its
    # own annotator too (tests/annotations/test_harmful_controls.py declines a harmful one).
    "annotations:decline": ("post", (LOGIN, MISSING, MISSING, MISSING)),
    # Likewise opening a harmful control's image: 404 for the fixture's benign items.
    "annotations:reveal": ("post", (LOGIN, MISSING, MISSING, MISSING)),
    "annotations:item_image": ("get", (LOGIN, ALLOWED, MISSING, ALLOWED)),
    "annotations:item_source_image": ("get", (LOGIN, ALLOWED, MISSING, ALLOWED)),
    # A's own answers in A's study; staff have no answers (tests/annotations/survey/test_my_answers.py).
    "annotations:my_answers": ("get", (LOGIN, ALLOWED, MISSING, MISSING)),
    # A study's guidelines: its annotators, and staff as a preview (test_guidelines.py).
    "guidelines:study": ("get", (LOGIN, ALLOWED, MISSING, ALLOWED)),
    # The qualification round: the fixture's batch has none, so its page is a 404 for its own
    # annotator too (tests/annotations/qualification/test_qualification.py opens a batch that has one).
    "qualification:page": ("get", (LOGIN, MISSING, MISSING, MISSING)),
    "qualification:start": ("post", (LOGIN, MISSING, MISSING, MISSING)),
    "qualification:staff_grant": staff_only("post"),
    "qualification:staff_override": staff_only("post"),
    "guidelines:staff_page": staff_only(),
    "guidelines:staff_example_set": staff_only("post"),
    "guidelines:staff_example_remove": staff_only_object("post"),
}


def _url_patterns(patterns, namespace=None, parent_args=()):
    """(name, URL arguments) of every pattern, namespaces included."""
    for entry in patterns:
        args = (*parent_args, *getattr(entry.pattern, "converters", {}))
        if isinstance(entry, URLResolver):
            inner = entry.namespace or namespace
            if namespace and entry.namespace:
                inner = f"{namespace}:{entry.namespace}"
            yield from _url_patterns(entry.url_patterns, inner, args)
        elif isinstance(entry, URLPattern):
            name = entry.name or f"(unnamed) {entry.pattern}"
            yield (f"{namespace}:{name}" if namespace else name), list(args)


def project_urls() -> dict[str, list[str]]:
    """Every URL name -> its arguments; Django's admin is represented by its index."""
    urls = dict(_url_patterns(get_resolver().url_patterns))
    return {name: args for name, args in urls.items() if not name.startswith("admin:")} | {
        "admin:index": []
    }


def test_every_url_has_an_expectation():
    names = set(project_urls())
    missing = sorted(names - set(EXPECTED))
    assert not missing, f"URL patterns with no row in EXPECTED (who may see them?): {missing}"
    stale = sorted(set(EXPECTED) - names)
    assert not stale, f"EXPECTED rows for URLs that no longer exist: {stale}"


# --- the requests ---------------------------------------------------------------------------

ARGUMENT_VALUES = {
    "token": "no-such-token",
    "source": "human",
    "measure": "refusal",
    "fmt": "svg",
    "judge": "nope",
    "kind": "original",
    "edit_id": 1,
    "run_id": 1,
    "name": "nope",
    "table": "nope",
    "key": "nope",
    "action": "grant",
}


def _kwargs(name: str, pattern_args: list[str], world: dict) -> dict:
    by_name = {
        "slug": "no-such-set"
        if name.startswith(("reflect:", "generation:face"))
        else world["slug"],
        "batch_id": world["batch"],
        "item_pk": world["item"],
        "annotator_id": world["annotator"],
    }
    if name.startswith("annotations:") and name not in ("annotations:item_image",):
        by_name["pk"] = world["assignment"]
    if name.startswith(("annotations:item_", "staff:item_")):
        by_name["pk"] = world["item"]
    if name in ("staff:batch_detail", "staff:batch_add_annotators", "staff:batch_reassign"):
        by_name["pk"] = world["batch"]
    if name.startswith(("quality:", "staff:annotator_")):
        by_name["pk"] = world["annotator"]
    if name == "staff:job_detail":
        by_name["pk"] = world["job"]
    if name == "scoring:job_progress":
        by_name["pk"] = world["scoring_job"]
    if name in ("reflect:face_image", "generation:face_image"):
        by_name["pk"] = 999_999
    if name in (
        "recruitment:staff_invite_revoke",
        "recruitment:staff_panel_link_close",
        "recruitment:staff_participant_release",
        "guidelines:staff_example_remove",
    ):
        by_name["pk"] = 999_999  # objects the fixture does not create: staff get a 404
    if name == "staff:export_annotations":
        by_name["fmt"] = "csv"
    return {arg: by_name.get(arg, ARGUMENT_VALUES.get(arg)) for arg in pattern_args}


@pytest.fixture
def world(batch, annotators, staff_user, tmp_path):
    annotator_a, annotator_b = annotators[0], annotators[2]
    assignment = Assignment.objects.filter(batch=batch, annotator=annotator_a).first()
    item = Item.objects.get(pk=assignment.item_id)
    item.source_image.name = item.image.name
    item.save(update_fields=["source_image"])
    job = BackgroundJob.objects.create(kind="x", study=batch.study)
    scoring_job = BackgroundJob.objects.create(kind=SCORING_JOB_KIND, study=batch.study)
    services.annotation_submit(assignment=assignment, hard_refusal=True, cue_label=None)
    clients = {
        "anonymous": Client(),
        "annotator_a": client_for(annotator_a),
        "annotator_b": client_for(annotator_b),
        "staff": Client(),
    }
    clients["staff"].force_login(staff_user)
    return {
        "slug": batch.study.slug,
        "batch": batch.pk,
        "assignment": assignment.pk,
        "item": item.pk,
        "annotator": annotator_a.pk,
        "job": job.pk,
        "scoring_job": scoring_job.pk,
        "clients": clients,
    }


def _outcome_holds(outcome: str, response) -> bool:
    status = response.status_code
    to_login = status == 302 and "/login/" in response.get("Location", "")
    if outcome == LOGIN:
        return to_login or status in (401, 403)
    if outcome == FORBIDDEN:
        return status == 403
    if outcome == MISSING:
        return status == 404
    if outcome == SIGNED_OUT:
        return to_login
    allowed = status < 500 and status not in (401, 403, 404) and not to_login
    if outcome == ALLOWED:
        return allowed
    return allowed or status == 404  # ALLOWED_OR_MISSING


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_permission_matrix(name, world):
    method, outcomes = EXPECTED[name]
    url = reverse(name, kwargs=_kwargs(name, project_urls()[name], world))
    failures = []
    for role, outcome in zip(ROLES, outcomes, strict=True):
        response = getattr(world["clients"][role], method)(url)
        if not _outcome_holds(outcome, response):
            failures.append(f"{role}: expected {outcome}, got {response.status_code}")
    assert not failures, f"{method.upper()} {url}: " + "; ".join(failures)
