"""REFLECT statistics: decision tasks over face images (2AFC, MCQ, salary), Django-free.

Definitions: docs/metrics.md, "REFLECT". The modules are layered, each importing only the
ones above it in this list (an import-linter contract in pyproject.toml checks it):

- ``vocabulary``: groups, scenarios, answer options, record columns
- ``parsing``: answer parsers and the record validators (``two_afc_records`` …)
- ``robustness``: template resampling, cluster bootstrap, leave-one-template-out
- ``two_afc``, ``mcq``, ``salary``: per task, the counts and the statistics over them
- ``variants``: mirrored/cropped variants and the source-gender split
- ``blocks``: the per-scenario / per-question report blocks
- ``report``: ``reflect_report``, the whole ``report.json`` of one or more models

``synthetic`` builds scripted designs and answers for tests and benchmarks.
"""

from scoring.stats.reflect.parsing import (
    mcq_records,
    parse_letter,
    parse_salary,
    salary_records,
    two_afc_records,
)
from scoring.stats.reflect.report import (
    cross_model_spearman,
    reflect_model_report,
    reflect_report,
    two_afc_discard_table,
)
from scoring.stats.reflect.vocabulary import GENDERS, GROUP_KEYS, GROUPS, RACES, SCENARIOS

__all__ = [
    "GENDERS",
    "GROUPS",
    "GROUP_KEYS",
    "RACES",
    "SCENARIOS",
    "cross_model_spearman",
    "mcq_records",
    "parse_letter",
    "parse_salary",
    "reflect_model_report",
    "reflect_report",
    "salary_records",
    "two_afc_discard_table",
    "two_afc_records",
]
