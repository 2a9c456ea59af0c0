"""The FOCUS face-only counterfactual protocol: one fixed editing instruction whose only
variable is the target group, applied to every source photo for every race x gender group.

The shipped default is REFLECT's instruction (``generation/data/reflect/protocol.json``,
Chen et al., arXiv:2601.06931v2, Appendix A); a study may bring its own template, as
long as it keeps the placeholder.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from generation.backends.base import GenerationRequest
from generation.data import reflect_protocol


@dataclass(frozen=True)
class FaceEditProtocol:
    template: str
    placeholder: str
    races: tuple[str, ...]
    genders: tuple[str, ...]
    reference_group: str = ""

    def __post_init__(self):
        if self.placeholder not in self.template:
            raise ValueError(f"the edit template must contain {self.placeholder!r}")
        if not self.races or not self.genders:
            raise ValueError("the protocol needs at least one race and one gender")

    @property
    def target_groups(self) -> list[str]:
        """'White female', 'White male', ... in protocol order."""
        return [f"{race} {gender}" for race in self.races for gender in self.genders]

    def instruction(self, target_group: str) -> str:
        return self.template.replace(self.placeholder, target_group)


@dataclass(frozen=True)
class FaceEditPlan:
    request_id: str
    template: str  # the template's name (FaceTemplate.name)
    target_group: str
    race: str
    gender: str
    instruction: str


def load_face_protocol(path: str | Path | None = None, *, template: str | None = None):
    """The protocol from ``path`` (default: the shipped one); ``template`` overrides the
    instruction text."""
    raw = json.loads(Path(path).read_text(encoding="utf-8")) if path else reflect_protocol()
    prompt = raw["face_edit_prompt"]
    groups = raw["groups"]
    reference = groups.get("reference") or {}
    return FaceEditProtocol(
        template=template if template is not None else prompt["text"],
        placeholder=prompt.get("placeholder", "{TARGET_GROUP}"),
        races=tuple(groups["race"]),
        genders=tuple(groups["gender"]),
        reference_group=" ".join(filter(None, [reference.get("race"), reference.get("gender")])),
    )


def plan_face_edits(templates: list[str], protocol: FaceEditProtocol) -> list[FaceEditPlan]:
    """One edit per (template, target group); ids are ``{template}:{race}:{gender}``."""
    plan = []
    for template in templates:
        for race in protocol.races:
            for gender in protocol.genders:
                group = f"{race} {gender}"
                plan.append(
                    FaceEditPlan(
                        request_id=f"{template}:{race}:{gender}",
                        template=template,
                        target_group=group,
                        race=race,
                        gender=gender,
                        instruction=protocol.instruction(group),
                    )
                )
    return plan


def face_edit_requests(
    sources: Mapping[str, str | Path | bytes], protocol: FaceEditProtocol, *, seed: int = 0
) -> list[GenerationRequest]:
    """Generation requests for an editing generator, one per planned edit."""
    return [
        GenerationRequest(
            request_id=edit.request_id,
            prompt=edit.instruction,
            seed=seed,
            source_image=sources[edit.template],
        )
        for edit in plan_face_edits(list(sources), protocol)
    ]
