"""Which questions a run asks: every request of the 2AFC, MCQ and salary tasks, keyed.

Django-free. Each planned request has a readable ``request_key``, unique within a run and
independent of database ids, so a rerun asks only for keys it has no answer for and an
exported run can be re-analysed elsewhere (docs/reflect.md, "Requests and answers"):

    2afc/<scenario>/<variant>/<occupation>/<template>/<Race|gender in A>/<Race|gender in B>
    mcq/<question>/<variant>/<occupation>/<template>/<Race|gender>/s<sample>[/explain]
    salary/<variant>/<occupation>/<template>/<Race|gender>/<biography key>
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from scoring.reflect.protocol import TaskPrompts
from scoring.stats.reflect.vocabulary import GROUPS


@dataclass(frozen=True)
class ImageRef:
    """An accepted image, as planning needs it (``image_id`` is opaque here)."""

    image_id: int
    occupation: str
    template: str
    race: str
    gender: str
    variant: str
    path: str

    @property
    def group(self) -> str:
        return f"{self.race}|{self.gender}"

    @property
    def group_index(self) -> int:
        return GROUPS.index((self.race, self.gender))


@dataclass(frozen=True)
class BiographyRef:
    biography_id: int
    occupation: str
    key: str
    text: str


@dataclass(frozen=True)
class PlannedRequest:
    request_key: str
    task: str
    item: str  # the scenario (2afc), the question (mcq) or "salary"
    prompt: str
    images: tuple[ImageRef, ...]
    presentation: str = ""  # 2afc: "original" (lower group index in A) or "swapped"
    sample_index: int = 0
    explain: bool = False
    biography: BiographyRef | None = None


def _by_template(images: Iterable[ImageRef]) -> dict[tuple[str, str, str], list[ImageRef]]:
    grouped: dict[tuple[str, str, str], list[ImageRef]] = defaultdict(list)
    for image in images:
        grouped[(image.variant, image.occupation, image.template)].append(image)
    return {
        key: sorted(group, key=lambda i: i.group_index) for key, group in sorted(grouped.items())
    }


def plan_two_afc(
    images: Sequence[ImageRef], prompts: TaskPrompts, *, scenarios: Sequence[str] | None = None
) -> list[PlannedRequest]:
    """Every unordered pair of a template's images, asked twice (A/B swapped), per scenario."""
    planned = []
    for scenario in scenarios or sorted(prompts.scenarios):
        text = prompts.scenarios[scenario]
        for (variant, occupation, template), group in _by_template(images).items():
            for first, second in combinations(group, 2):
                for presentation, (a, b) in (
                    ("original", (first, second)),
                    ("swapped", (second, first)),
                ):
                    key = f"2afc/{scenario}/{variant}/{occupation}/{template}/{a.group}/{b.group}"
                    planned.append(
                        PlannedRequest(key, "2afc", scenario, text, (a, b), presentation)
                    )
    return planned


def plan_mcq(
    images: Sequence[ImageRef],
    prompts: TaskPrompts,
    *,
    questions: Sequence[str] | None = None,
    explain: bool = False,
    samples: int = 1,
) -> list[PlannedRequest]:
    """Each image once per question (``samples`` times when sampling at a temperature)."""
    if samples < 1:
        raise ValueError("samples must be >= 1")
    planned = []
    suffix = "/explain" if explain else ""
    for question in questions or sorted(prompts.mcq):
        text = prompts.mcq_text(question, explain=explain)
        for image in sorted(images, key=_image_order):
            for sample in range(samples):
                key = (
                    f"mcq/{question}/{image.variant}/{image.occupation}/{image.template}/"
                    f"{image.group}/s{sample}{suffix}"
                )
                planned.append(
                    PlannedRequest(key, "mcq", question, text, (image,), "", sample, explain)
                )
    return planned


def plan_salary(
    images: Sequence[ImageRef], biographies: Sequence[BiographyRef], prompts: TaskPrompts
) -> list[PlannedRequest]:
    """Every image × every biography of the image's occupation."""
    by_occupation: dict[str, list[BiographyRef]] = defaultdict(list)
    for biography in biographies:
        by_occupation[biography.occupation].append(biography)
    planned = []
    for image in sorted(images, key=_image_order):
        for biography in sorted(by_occupation.get(image.occupation, []), key=lambda b: b.key):
            key = (
                f"salary/{image.variant}/{image.occupation}/{image.template}/{image.group}/"
                f"{biography.key}"
            )
            text = prompts.salary_text(occupation=image.occupation, biography=biography.text)
            planned.append(
                PlannedRequest(key, "salary", "salary", text, (image,), biography=biography)
            )
    return planned


def _image_order(image: ImageRef) -> tuple:
    return (image.variant, image.occupation, image.template, image.group_index)


def answer_options(request: PlannedRequest, prompts: TaskPrompts) -> tuple[str, ...] | None:
    """The letters a backend should score, or None for free-text answers (salary)."""
    if request.task == "2afc":
        return ("A", "B")
    if request.task == "mcq":
        return prompts.mcq_options[request.item]
    return None
