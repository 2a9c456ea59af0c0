"""One batch request: every option for creating a batch, in one frozen record, and its rules.

The new-batch form, ``create_batch`` and the background job only build a ``BatchRequest``;
``services.batch_request_build`` checks it and names every problem at once; planning and
creation (``services.batch_plan``, ``services.batch_create``) take it whole, and the job gets it
as JSON (``to_json`` / ``from_json``). A number option is one row of ``NUMBER_OPTIONS``: its
field, bounds, label and help text, from which the form field, the command's argument and the
bounds check are made (docs/architecture.md, "Where to add …"). No Django here.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields

from annotations import policies
from annotations.qualification import rules as qualification_rules

# Batch.Policy's values a request may ask for (imported labels are a record, never planned).
POLICIES = ("k_overlap", "expertise", "manual", "validate_judge")
MANUAL = "manual"
EXPERTISE = "expertise"
VALIDATE_JUDGE = "validate_judge"
NAME_MAX_LENGTH = 200  # Batch.name
# A seed goes into a BigIntegerField and numpy's SeedSequence: 0 … 2**63 − 1.
SEED_MAX = 2**63 - 1


@dataclass(frozen=True)
class NumberOption:
    """One number option of a batch: its ``BatchRequest`` field (the form field's name too),
    ``create_batch``'s flag, and the bounds every path checks (None: unbounded)."""

    name: str
    kind: type  # int or float
    flag: str
    label: str
    help: str = ""
    minimum: float | None = None
    maximum: float | None = None

    def problem(self, value) -> str | None:
        """One line when ``value`` is not allowed (None, the default, always is)."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(
            value, (int, float) if self.kind is float else int
        ):
            return f"{self.label}: a {'number' if self.kind is float else 'whole number'} (got {value!r})"
        if self.minimum is not None and not value >= self.minimum:
            return f"{self.label} must be at least {self.minimum} (got {value})"
        if self.maximum is not None and not value <= self.maximum:
            return f"{self.label} must be at most {self.maximum} (got {value})"
        return None


NUMBER_OPTIONS: tuple[NumberOption, ...] = (
    NumberOption(
        "overlap_k",
        int,
        "--k",
        "overlap k",
        "Annotators per item (empty: the study's k). Manual pairs ignore it.",
        1,
        50,
    ),
    NumberOption(
        "seed",
        int,
        "--seed",
        "seed",
        "Empty for a fresh random seed (stored on the batch).",
        0,
        SEED_MAX,
    ),
    NumberOption(
        "gold_per_annotator",
        int,
        "--gold-per-annotator",
        "gold items per annotator",
        "Gold items mixed into every annotator's queue.",
        0,
        10_000,
    ),
    NumberOption(
        "gold_rate",
        float,
        "--gold-rate",
        "gold rate",
        "Share of each queue that is gold (e.g. 0.05), at random positions.",
        0.0,
        0.5,
    ),
    NumberOption(
        "budget",
        int,
        "--budget",
        "budget",
        "Items humans label. Validate the judge: required. k-overlap and expertise: a uniform "
        "random sample of this many items (empty: every item).",
        1,
        10_000_000,
    ),
    NumberOption(
        "min_per_value",
        int,
        "--min-per-value",
        "minimum per attribute value",
        "Validate the judge: items per attribute value at least (empty: half the budget spread "
        "evenly over the values).",
        0,
        10_000_000,
    ),
    # The optional qualification round (docs/annotation.md#qualification-round).
    NumberOption(
        "qualification_items",
        int,
        "--qualification-items",
        "qualification: gold items",
        "0 or empty: no qualification round. N: each annotator first answers N gold items and "
        "starts the batch only if they pass.",
        0,
        qualification_rules.MAX_ITEMS,
    ),
    NumberOption(
        "qualification_pass_mark",
        float,
        "--qualification-pass-mark",
        "qualification: pass mark",
        "Share of gold answers that must match the gold label, in (0, 1], e.g. 0.8.",
    ),
    NumberOption(
        "qualification_attempts",
        int,
        "--qualification-attempts",
        "qualification: attempts",
        "Attempts each annotator has, each with new gold items (staff can allow more).",
        1,
        100,
    ),
)
QUALIFICATION_OPTIONS = ("qualification_items", "qualification_pass_mark", "qualification_attempts")


@dataclass(frozen=True)
class BatchRequest:
    """Every option of a batch to create. Ids, not model rows: it travels to the job as JSON.

    ``overlap_k`` None: the study's k. ``seed`` None: a fresh one, drawn when planned.
    ``item_ids`` None: every item the study gives annotators; otherwise the subset the new-batch
    filter kept, which ``subset`` describes. ``manual_pairs``: (item pk, annotator pk) pairs,
    for the manual policy only. ``qualification_items`` 0: no qualification round."""

    study_id: int
    name: str
    policy: str
    annotator_ids: tuple[int, ...]
    overlap_k: int | None = None
    seed: int | None = None
    gold_per_annotator: int = 0
    gold_rate: float = 0.0
    budget: int | None = None
    min_per_value: int | None = None
    qualification_items: int = 0
    qualification_pass_mark: float | None = None
    qualification_attempts: int = 1
    item_ids: tuple[int, ...] | None = None
    subset: str = ""
    manual_pairs: tuple[tuple[int, int], ...] = field(default=())
    created_by_id: int | None = None

    def __post_init__(self):
        # One canonical form, so that equal requests plan equal batches and survive JSON: the
        # annotators in id order (a policy's seeded draw depends on it), tuples, a stripped name.
        set_ = object.__setattr__
        set_(self, "name", str(self.name).strip())
        set_(self, "annotator_ids", tuple(sorted(set(self.annotator_ids))))
        if self.item_ids is not None:
            set_(self, "item_ids", tuple(sorted(set(self.item_ids))))
        set_(self, "manual_pairs", tuple(tuple(pair) for pair in self.manual_pairs))

    @classmethod
    def from_options(cls, **options) -> BatchRequest:
        """A request from a form's or a command's values: None (an empty field, an absent flag)
        takes the option's default."""
        defaults = {f.name: f.default for f in fields(cls)}
        return cls(**{k: v for k, v in options.items() if v is not None or defaults.get(k) is None})

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> BatchRequest:
        return cls(**json.loads(text))

    @property
    def qualification(self) -> qualification_rules.Requirement | None:
        """The qualification round asked for (None: none; a checked request only)."""
        if not self.qualification_items:
            return None
        return qualification_rules.Requirement(
            self.qualification_items, self.qualification_pass_mark, self.qualification_attempts
        )


@dataclass(frozen=True)
class StudyFacts:
    """What the checks need to know from the database (``services.batch_request_problems``)."""

    study_overlap_k: int
    name_taken: bool = False
    # Annotator pk → group, for the requested annotators that exist.
    annotator_groups: Mapping[int, str] = field(default_factory=dict)
    # The study's gold items a qualification attempt may draw (qualification asked for only).
    gold_available: int = 0
    # Items the batch may give, per attribute value (expertise only).
    items_per_value: Mapping[str, int] = field(default_factory=dict)


def effective_k(request: BatchRequest, study_overlap_k: int) -> int:
    return request.overlap_k or study_overlap_k


def name_problems(name: str, *, taken: bool) -> list[str]:
    """The batch name rule, for every batch of a study (recruitment batches too)."""
    name = name.strip()
    if not name:
        return ["give the batch a name"]
    if len(name) > NAME_MAX_LENGTH:
        return [f"the batch name is at most {NAME_MAX_LENGTH} characters (got {len(name)})"]
    if taken:
        return [f"the study already has a batch named {name!r}: choose another name"]
    return []


def qualification_problems(request: BatchRequest, *, gold_available: int) -> list[str]:
    """The qualification round's rule: none asked for (0 items, no pass mark), or a complete
    one. A pass mark without items is an error, never a round silently dropped."""
    items, pass_mark = request.qualification_items, request.qualification_pass_mark
    if not items and pass_mark is None:
        return []
    if pass_mark is None:
        return ["qualification: give a pass mark in (0, 1], e.g. 0.8"]
    requirement = qualification_rules.Requirement(items, pass_mark, request.qualification_attempts)
    return qualification_rules.requirement_problems(requirement, gold_available=gold_available)


def request_problems(request: BatchRequest, facts: StudyFacts) -> list[str]:
    """Every problem with the request, one line each (empty: it can be planned). The plan may
    still find one the database decides item by item (an item with too few annotators left, an
    annotator short of fresh gold for the qualification round)."""
    problems = name_problems(request.name, taken=facts.name_taken)
    if request.policy not in POLICIES:
        problems.append(f"unknown policy {request.policy!r} (known: {', '.join(POLICIES)})")
    bounds = {o.name: o.problem(getattr(request, o.name)) for o in NUMBER_OPTIONS}
    problems += [line for line in bounds.values() if line]
    missing = [pk for pk in request.annotator_ids if pk not in facts.annotator_groups]
    if missing:
        problems.append(f"annotators that no longer exist: ids {', '.join(map(str, missing))}")
    annotators = [pk for pk in request.annotator_ids if pk in facts.annotator_groups]
    k = effective_k(request, facts.study_overlap_k)
    if request.policy != MANUAL and not bounds["overlap_k"]:
        problems += policies.overlap_k_problems(k, len(annotators))
    if request.policy == VALIDATE_JUDGE and request.budget is None:
        problems.append("validate-judge needs a budget: how many items humans label")
    if request.policy == MANUAL and request.budget is not None:
        problems.append("manual pairs take no budget: list the pairs instead")
    if request.item_ids is not None and not request.item_ids:
        problems.append(f"no item matches the filter ({request.subset or 'no items chosen'})")
    if request.policy == EXPERTISE and not bounds["overlap_k"]:
        groups = Counter(facts.annotator_groups[pk] for pk in annotators)
        groups.pop("", None)
        problems += policies.expertise_shortfalls(facts.items_per_value, groups, k)
    if not any(bounds[name] for name in QUALIFICATION_OPTIONS):
        problems += qualification_problems(request, gold_available=facts.gold_available)
    return problems


class BatchRequestInvalid(policies.PolicyError):
    """A request that cannot be planned: ``problems``, one line each (the message joins them)."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))
