"""A study's config, parsed once: what ``study_setup`` needs, from a YAML/JSON mapping.

``StudyConfig.from_dict`` checks every key and reports every problem at once
(``ConfigProblems``, one line each, naming the key), so a mistake in a ``run_audit`` file is
found before anything is written. No Django: ``generation.services.study_setup`` writes what
this reads; ``scoring.audit_config`` reads the ``study:`` part of a ``run_audit`` file with it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from annotations.common.study_address import study_address_checked
from generation.backends.registry import ConfigProblems, configs_by_name
from generation.prompts.controls import DEFAULT_HARMFUL_SHARE, harmful_share_checked
from generation.prompts.expansion import MISSING_SLOT_POLICIES


@dataclasses.dataclass(frozen=True)
class StudyConfig:
    """What ``study_setup`` needs, parsed once from a YAML/JSON mapping (``from_dict``)."""

    slug: str
    name: str
    base_prompts: str | None = None  # None: the shipped 108 ACRB prompts
    taxonomy: str | None = None  # None: the shipped taxonomy
    sample_size: int | None = None  # base prompts drawn (by sample_seed) before expansion
    sample_seed: int = 0
    attributes: tuple[str, ...] = ()  # () = every attribute of the taxonomy
    missing_slot: str = "skip"
    seeds: tuple[int, ...] = (0,)
    generators: dict = dataclasses.field(default_factory=dict)  # name -> config or None
    description: str = ""
    rephrase: str | None = None  # a rewriter's name (ACRB_REWRITERS, or rephrase_config)
    rephrase_config: dict | None = None
    # Harmful controls (docs/generation.md): None = none; else the share per domain.
    harmful_share: float | None = None
    harmful_seed: int = 0

    @classmethod
    def from_dict(cls, raw: Any, *, base_dir: str | Path | None = None) -> StudyConfig:
        """``generators`` may be a list of names (configured in ACRB_GENERATORS), of config
        dicts, or a mapping name -> config; paths are relative to ``base_dir``. Every problem is
        one line of ``ConfigProblems`` (a ``ValueError``), e.g. ``slug: must be text, not list``.
        """
        if not isinstance(raw, Mapping):
            raise ConfigProblems([f"the study config is a mapping, not {type(raw).__name__}"])
        problems: list[str | tuple[str, str]] = []
        known = {field.name for field in dataclasses.fields(cls)} | {"harmful_controls"}
        unknown = sorted(set(raw) - known, key=str)
        if unknown:
            problems.append(f"unknown study config keys {unknown}; known: {sorted(known)}")
        if raw.get("slug") is None:
            problems.append("the study config needs a 'slug'")
        values: dict[str, Any] = {}
        for key, check in CHECKS.items():
            if raw.get(key) is None:  # absent or null: the default
                continue
            try:
                values[key] = check(raw[key])
            except ConfigProblems as exc:
                problems += exc.within(key).problems
            except ValueError as exc:
                problems.append((key, str(exc)))
        if "harmful_controls" in values:
            values["harmful_share"], values["harmful_seed"] = values.pop("harmful_controls")
        if "rephrase" in values:
            values["rephrase"], values["rephrase_config"] = values["rephrase"]
        if problems:
            raise ConfigProblems(problems)
        values.setdefault("name", values["slug"])
        for key in ("base_prompts", "taxonomy"):
            if values.get(key) and base_dir is not None:
                values[key] = str(Path(base_dir) / values[key])
        return cls(**values)


def harmful_controls_choice(raw) -> tuple[float | None, int]:
    """``harmful_controls:`` in a run_audit config: ``true`` (the default share), a share, or a
    mapping ``{share: 0.25, seed: 0}``; ``false``/absent: none. Returns (share or None, seed)."""
    if raw is None or raw is False:
        return None, 0
    if raw is True:
        return DEFAULT_HARMFUL_SHARE, 0
    if isinstance(raw, dict):
        unknown = sorted(set(raw) - {"share", "seed"})
        if unknown:
            raise ValueError(f"unknown harmful_controls keys {unknown}; known: ['seed', 'share']")
        share = harmful_share_checked(raw.get("share", DEFAULT_HARMFUL_SHARE))
        return share, whole_number(raw.get("seed", 0))
    return harmful_share_checked(raw), 0


def rephrase_choice(raw) -> tuple[str | None, dict | None]:
    """``rephrase:`` as a configured rewriter's name, or a one-entry mapping name -> config."""
    if raw is None or isinstance(raw, str):
        return raw or None, None
    if isinstance(raw, dict) and len(raw) == 1:
        ((name, config),) = raw.items()
        return str(name), config
    raise ValueError("'rephrase' is a rewriter's name or a one-entry mapping name -> config")


# --- one check per key: the value as the config keeps it, or a ValueError of one line -------


def _kind(value) -> str:
    return type(value).__name__


def text(value) -> str:
    if not isinstance(value, str):
        raise ValueError(f"must be text, not {_kind(value)}")
    return value


def slug(value) -> str:
    """The study address, by the one rule every path checks (annotations.common.study_address)."""
    return study_address_checked(value)


def whole_number(value, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"must be a whole number ≥ {minimum}, not {value!r}")
    return value


def names(value) -> tuple[str, ...]:
    # A lone name is refused rather than read letter by letter.
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"must be a list of names (e.g. [culture]), not {value!r}")
    return tuple(value)


def seeds(value) -> tuple[int, ...]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"must be a list of whole numbers (e.g. [0, 1]), not {value!r}")
    return tuple(whole_number(seed) for seed in value)


def missing_slot(value) -> str:
    if value not in MISSING_SLOT_POLICIES:
        raise ValueError(f"must be one of {', '.join(MISSING_SLOT_POLICIES)}, not {value!r}")
    return value


def mapping(value) -> dict:
    if not isinstance(value, Mapping):
        raise ValueError(f"must be a mapping, not {_kind(value)}")
    return dict(value)


CHECKS: dict[str, Callable[[Any], Any]] = {
    "slug": slug,
    "name": text,
    "base_prompts": text,
    "taxonomy": text,
    "sample_size": lambda value: whole_number(value, minimum=1),
    "sample_seed": whole_number,
    "attributes": names,
    "missing_slot": missing_slot,
    "seeds": seeds,
    "generators": lambda value: configs_by_name(value, what="generator"),
    "description": text,
    "rephrase": rephrase_choice,
    "rephrase_config": mapping,
    "harmful_controls": harmful_controls_choice,
    "harmful_share": harmful_share_checked,
    "harmful_seed": whole_number,
}
