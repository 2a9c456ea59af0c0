"""Batches from a subset (docs/annotation.md, "Batches from a subset"): which items a new batch
takes, and each annotator's workload before the batch is made.

The filter narrows the study's non-gold, included items; the preview runs the batch's own policy
(``services.batch_plan``) without writing, so what it shows is what ``batch_create`` makes.
"""

from __future__ import annotations

from collections import Counter

from django import forms
from django.db.models import Count, Exists, F, OuterRef, Q

from annotations import services
from annotations.batches.request import BatchRequest
from annotations.models import Annotator, Assignment, AutomatedJudgment, Item, Study

ANY = ""


def _choices(values) -> list[tuple[str, str]]:
    return [(ANY, "any")] + [(v, v or "(empty)") for v in values]


class BatchSubsetForm(forms.Form):
    """Which items: every field narrows; all left at "any" means every item."""

    attribute_value = forms.ChoiceField(required=False, label="Attribute value")
    generator = forms.ChoiceField(required=False)
    domain = forms.ChoiceField(required=False)
    judges_disagree = forms.BooleanField(
        required=False,
        label="Only items on which the automated judges disagree",
        help_text="At least two judges, and not all give the same refusal and cue label.",
    )
    not_labelled = forms.BooleanField(
        required=False,
        label="Only items nobody has labelled yet",
        help_text="No answered assignment in any batch.",
    )

    def __init__(self, study: Study, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.study = study
        items = Item.objects.filter(study=study)
        values = (
            items.values_list("attribute_value__attribute", "attribute_value__value")
            .distinct()
            .order_by("attribute_value__attribute", "attribute_value__value")
        )
        self.fields["attribute_value"].choices = [(ANY, "any")] + [
            (f"{a}={v}", f"{a} = {v}") for a, v in values
        ]
        self.fields["generator"].choices = _choices(
            items.values_list("generator", flat=True).distinct().order_by("generator")
        )
        self.fields["domain"].choices = _choices(
            items.values_list("domain", flat=True).distinct().order_by("domain")
        )

    def is_filtered(self) -> bool:
        data = self.cleaned_data
        return any(data.get(f) not in (None, ANY, False) for f in self.fields)

    def description(self) -> str:
        data, parts = self.cleaned_data, []
        for field in ("attribute_value", "generator", "domain"):
            if data.get(field):
                parts.append(f"{field.replace('_', ' ')} {data[field]}")
        if data.get("judges_disagree"):
            parts.append("judges disagree")
        if data.get("not_labelled"):
            parts.append("not yet labelled")
        return ", ".join(parts) or "every item"


def subset_item_ids(*, study: Study, form: BatchSubsetForm) -> list[int] | None:
    """The pks of the items the filter keeps (None: no filter, every item). Gold and excluded
    items are never in a subset: gold is added by the gold options, excluded items never."""
    if not form.is_filtered():
        return None
    data = form.cleaned_data
    rows = Item.objects.filter(study=study, is_gold=False, excluded_at__isnull=True)
    if data.get("attribute_value"):
        attribute, _, value = data["attribute_value"].partition("=")
        rows = rows.filter(attribute_value__attribute=attribute, attribute_value__value=value)
    for field in ("generator", "domain"):
        if data.get(field) not in (None, ANY):
            rows = rows.filter(**{field: data[field]})
    if data.get("not_labelled"):
        answered = Assignment.objects.filter(item=OuterRef("pk"), answered_at__isnull=False)
        rows = rows.filter(~Exists(answered))
    if data.get("judges_disagree"):
        rows = rows.filter(pk__in=_judges_disagree(study))
    return list(rows.order_by("pk").values_list("pk", flat=True))


def _judges_disagree(study: Study):
    """Items with at least two usable judgments that are not all the same (refusal, cue)."""
    usable = AutomatedJudgment.objects.filter(
        item__study=study, hard_refusal__isnull=False, error=""
    )
    return (
        usable.values("item")
        .annotate(
            judges=Count("pk"),
            refusals=Count("pk", filter=Q(hard_refusal=True)),
            cues=Count("cue_label", distinct=True),
        )
        .filter(judges__gte=2)
        .filter(Q(refusals__gt=0, refusals__lt=F("judges")) | Q(cues__gt=1))
        .values("item")
    )


def workload_preview(*, request: BatchRequest) -> dict:
    """Each annotator's items and gold items in the batch the request would make (nothing is
    written; PolicyError when the policy cannot do it). ``seed`` comes back so the batch made
    next uses the same one."""
    plan = services.batch_plan(request=request)
    items = Counter(a for item, a in plan.pairs if item not in plan.gold_items)
    gold = Counter(a for item, a in plan.pairs if item in plan.gold_items)
    annotators = Annotator.objects.filter(pk__in=request.annotator_ids).select_related("user")
    rows = [
        {
            "annotator": annotator,
            "items": items.get(annotator.pk, 0),
            "gold": gold.get(annotator.pk, 0),
        }
        for annotator in annotators.order_by("user__username")
    ]
    distinct_items = {item for item, _ in plan.pairs if item not in plan.gold_items}
    return {
        "rows": rows,
        "seed": plan.seed,
        "items": len(distinct_items),
        "assignments": len(plan.pairs),
        "not_probability_sample": not_probability_sample_text(plan),
    }


# What the page and create_batch say before a batch that is not a probability sample is made.
NOT_PROBABILITY_SAMPLE = (
    "This batch will not be a probability sample: it takes only part of the items of {cells}. "
    "Its labels count in the human rates and the agreement statistics, but they are left out "
    "of the prediction-powered (PPI) estimates, which need every item of an attribute value to "
    "have a known chance of being labelled. To label where the judges disagree and keep that, "
    "use the policy 'validate the judge' (it draws those items more often and records how "
    "often); to label one value, choose only an attribute value."
)


def not_probability_sample_text(plan: services.BatchPlan) -> str:
    """The warning for a planned batch that is not a probability sample; blank when it is one
    (docs/annotation.md, "Batches from a subset")."""
    if plan.probability_sample is not False:
        return ""
    shown = ", ".join(plan.cells_cut[:5])
    more = len(plan.cells_cut) - 5
    return NOT_PROBABILITY_SAMPLE.format(cells=shown + (f" and {more} more" if more > 0 else ""))


# --- the same filter from a command (create_batch) --------------------------------------------


def add_subset_arguments(parser) -> None:
    parser.add_argument("--attribute-value", default="", help="e.g. culture=Korean")
    parser.add_argument("--generator", default="")
    parser.add_argument("--domain", default="")
    parser.add_argument("--judges-disagree", action="store_true")
    parser.add_argument("--not-labelled", action="store_true")


def subset_from_options(study: Study, options: dict) -> tuple[list[int] | None, str]:
    """(item pks or None for every item, a description), from create_batch's options; the page's
    form checks them, so an unknown value is one line (ValueError) naming what there is. A
    filter no item matches is the batch request's problem (``no item matches the filter``)."""
    data = {
        "subset-attribute_value": options.get("attribute_value") or "",
        "subset-generator": options.get("generator") or "",
        "subset-domain": options.get("domain") or "",
    }
    if options.get("judges_disagree"):
        data["subset-judges_disagree"] = "on"
    if options.get("not_labelled"):
        data["subset-not_labelled"] = "on"
    form = BatchSubsetForm(study, data, prefix="subset")
    if not form.is_valid():
        problems = []
        for field, _errors in form.errors.items():
            known = ", ".join(v for v, _ in form.fields[field].choices if v) or "none"
            problems.append(
                f"--{field.replace('_', '-')}: {data['subset-' + field]!r} is not in the study (known: {known})"
            )
        raise ValueError("; ".join(problems))
    return subset_item_ids(study=study, form=form), form.description()
