"""A study's address (its slug): the one rule every path that names a new study checks (the
new-study and new-plan forms, ``import_items --create``, ``plan_study --create``, run_audit's
YAML, ``study_create``), and the test the staff pages use to tell which stored addresses they
can link to. No Django: a config parser may call it before any database work.

The rule is the one Django's ``<slug:...>`` URL converter matches, so an address that passes is
an address every study page can be reached at. See docs/annotation.md#study-addresses.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

MAX_LENGTH = 100  # Study.slug's max_length
# Django's slug converter ([-a-zA-Z0-9_]+), anchored at both ends of the whole text.
_ADDRESS = re.compile(r"[-a-zA-Z0-9_]+")
# Taken by a page under /staff/studies/ (the new-study form).
RESERVED = frozenset({"new"})


class StudyAddressInvalid(ValueError):
    """A study address that no page could be reached at; the message is one line naming it."""


def study_address_problem(value: object) -> str | None:
    """Why ``value`` cannot be a study's address, in words, or None when it can."""
    if not isinstance(value, str):
        return f"a study address is text, not {type(value).__name__} {_shown(value)}"
    if not value:
        return "the study address is empty"
    if len(value) > MAX_LENGTH:
        return f"study address {_shown(value)} is {len(value)} characters; at most {MAX_LENGTH}"
    if not _ADDRESS.fullmatch(value):
        return (
            f"study address {_shown(value)} may hold only ASCII letters, digits, '-' and '_' "
            "(no spaces, brackets or other signs), e.g. 'my-study-2026'"
        )
    if value in RESERVED:
        return f"study address {value!r} is taken by a page; choose another"
    return None


def study_address_checked(value: object) -> str:
    """``value`` when it is a valid study address; else ``StudyAddressInvalid``."""
    problem = study_address_problem(value)
    if problem is not None:
        raise StudyAddressInvalid(problem)
    return value  # type: ignore[return-value]


def study_address_ok(value: object) -> bool:
    return study_address_problem(value) is None


@dataclass(frozen=True)
class UnlinkableStudy:
    """A study stored under a bad address, what is wrong, and the command that renames it."""

    study: Any
    problem: str
    rename_command: str


def study_addresses_split(studies) -> tuple[list, list[UnlinkableStudy]]:
    """``studies`` (anything with a ``slug``) as (those with a valid address, the others): a page
    links the first and lists the second with their rename command, never a 500."""
    good, bad = [], []
    for study in studies:
        problem = study_address_problem(study.slug)
        if problem is None:
            good.append(study)
        else:
            bad.append(UnlinkableStudy(study, problem, study_rename_command(study.slug)))
    return good, bad


def study_address_suggested(value: object) -> str:
    """A valid address made from a bad one (runs of other signs become one '-')."""
    text = re.sub(r"[^-a-zA-Z0-9_]+", "-", str(value)).strip("-")[:MAX_LENGTH].strip("-")
    return text if text and text not in RESERVED else f"study-{text}"[:MAX_LENGTH].strip("-")


def study_rename_command(value: object) -> str:
    """The command that renames a study stored under a bad address (shell-quoted)."""
    return (
        f"python manage.py rename_study {shlex.quote(str(value))} {study_address_suggested(value)}"
    )


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
