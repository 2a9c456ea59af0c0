"""A ``run_audit`` file, parsed once: ``AuditConfig.from_yaml`` (docs/judges.md, "run_audit").

Every key is checked and every problem reported at once, before anything is written: a
``ConfigProblems`` whose lines each name the key by its path (``study.slug: must be a slug
…``, ``judges.clip: …``, ``n_resamples: …``). A judge or generator given by name only must be
configured in the backends file, and an inline one must name a registered kind; both are
checked here too, so a typo is not found after the images are made. The ``study:`` part is
``generation.study_config.StudyConfig``; ``rephrase`` and ``harmful_controls`` may sit at the
top level, as earlier files have them, and are read into it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings

from generation import services as generation_services
from generation.backends.registry import (
    BackendConfigError,
    ConfigProblems,
    named_configs,
    not_configured,
)
from generation.study_config import StudyConfig, whole_number
from scoring.judges.registry import JUDGES
from scoring.stats.bootstrap import DEFAULT_N_RESAMPLES

# The study's own keys an audit file may give at its top level (docs/judges.md).
STUDY_KEYS_AT_TOP = ("rephrase", "harmful_controls")
# ``n_bootstrap``: the earlier spelling of ``n_resamples``, still read.
TOP_KEYS = ("study", "judges", *STUDY_KEYS_AT_TOP, "n_resamples", "n_bootstrap")
QUICK_PROMPTS = 2


@dataclasses.dataclass(frozen=True)
class AuditConfig:
    """What ``run_audit`` runs: the study (Stage I–II), the judges by name (Stage III, None: the
    one configured under that name) and the bootstrap size of the report's intervals."""

    study: StudyConfig
    judges: dict[str, dict[str, Any] | None]
    n_resamples: int = DEFAULT_N_RESAMPLES

    @classmethod
    def from_yaml(cls, path: Path) -> AuditConfig:
        """The file at ``path``; paths in it are relative to its folder."""
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigProblems([f"cannot read {path}: {exc.strerror or exc}"]) from None
        except (UnicodeDecodeError, yaml.YAMLError) as exc:
            reason = " ".join(str(exc).split())
            raise ConfigProblems([f"{path} is not a YAML file: {reason}"]) from None
        return cls.from_dict(raw, base_dir=path.parent)

    @classmethod
    def from_dict(cls, raw: Any, *, base_dir: str | Path | None = None) -> AuditConfig:
        if not isinstance(raw, Mapping):
            shown = "empty" if raw is None else f"a {type(raw).__name__}"
            raise ConfigProblems(
                [f"needs a 'study:' mapping (docs/judges.md), the file is {shown}"]
            )
        problems: list[str | tuple[str, str]] = []
        unknown = sorted(set(raw) - set(TOP_KEYS), key=str)
        if unknown:
            problems.append(f"unknown keys {unknown}; known: {list(TOP_KEYS)}")
        study, study_problems = _study(raw, base_dir=base_dir)
        problems += study_problems
        judges, judge_problems = named_configs(raw.get("judges"), what="judge")
        problems += ConfigProblems(judge_problems).within("judges").problems
        problems += _unusable_judges(judges)
        n_resamples, resample_problems = _n_resamples(raw)
        problems += resample_problems
        if problems:
            raise ConfigProblems(problems)
        return cls(study=study, judges=judges, n_resamples=n_resamples)

    def quick(self) -> AuditConfig:
        """A few base prompts and the first generator only (``run_audit --quick``)."""
        size = self.study.sample_size
        study = dataclasses.replace(
            self.study,
            generators=dict(list(self.study.generators.items())[:1]),
            sample_size=QUICK_PROMPTS if size is None else min(size, QUICK_PROMPTS),
        )
        return dataclasses.replace(self, study=study)

    @property
    def judge_configs(self) -> dict[str, dict[str, Any]]:
        """The judges this file configures itself (``services.study_score(judge_configs=…)``);
        the others are looked up in the backends file."""
        return {name: config for name, config in self.judges.items() if config is not None}


def _study(raw: Mapping, *, base_dir) -> tuple[StudyConfig | None, list]:
    study_raw = raw.get("study")
    if not isinstance(study_raw, Mapping):
        shown = "missing" if study_raw is None else f"a {type(study_raw).__name__}"
        return None, [("study", f"needs a mapping (docs/judges.md), not {shown}")]
    study_raw = dict(study_raw)
    problems: list = []
    for key in STUDY_KEYS_AT_TOP:
        if key in raw and key in study_raw:
            problems.append((key, "given twice, at the top and under 'study:'; keep one"))
        elif key in raw:
            study_raw[key] = raw[key]
    try:
        study = StudyConfig.from_dict(study_raw, base_dir=base_dir)
    except ConfigProblems as exc:
        return None, problems + exc.within("study").problems
    for name, config in study.generators.items():
        try:
            generation_services.generator_config_resolve(name=name, config=config)
        except BackendConfigError as exc:
            problems.append((f"study.generators.{name}", str(exc)))
    return study, problems


def _unusable_judges(judges: Mapping[str, dict[str, Any] | None]) -> list:
    problems = []
    for name, config in judges.items():
        if config is None and name not in settings.ACRB_JUDGES:
            problems.append(("judges", not_configured("judge", name, settings.ACRB_JUDGES)))
        elif config is not None:
            try:
                JUDGES.entry(config.get("kind"))
            except BackendConfigError as exc:
                problems.append((f"judges.{name}", str(exc)))
    return problems


def _n_resamples(raw: Mapping) -> tuple[int, list]:
    given = [key for key in ("n_resamples", "n_bootstrap") if key in raw]
    if len(given) == 2:
        return DEFAULT_N_RESAMPLES, [("n_bootstrap", "the earlier name of n_resamples; keep one")]
    if not given:
        return DEFAULT_N_RESAMPLES, []
    try:
        return whole_number(raw[given[0]]), []
    except ValueError as exc:
        return DEFAULT_N_RESAMPLES, [(given[0], str(exc))]
