"""Recruitment rules as plain functions (no Django): tokens, link states, panel parameters,
and which items a newly enrolled annotator receives.

The services beside this module (consent, enrolment, invites, panels) load rows, call these
functions and write the result.
See docs/annotation.md#recruitment-without-passwords.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from ..policies import PolicyItem

# Panel ids are not secrets, but they end up in usernames, logs and exports: keep them plain.
PANEL_ID_PATTERN = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
PARAM_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,50}$")
ENROLMENT_POLICIES = ("k_overlap", "expertise")
DEFAULT_INVITE_DAYS = 14


def gettext_noop(message: str) -> str:
    """Marks a message shown to a person for translation without translating it here (no
    Django in this module): ``makemessages`` finds the name, the page translates the message
    in the person's language (``views.message_for_person``)."""
    return message


class RecruitmentError(ValueError):
    """A recruitment request that cannot be honoured; the message is one line for the person.

    ``message`` may hold ``%(name)s`` placeholders filled from ``params``: the untranslated
    message is what pages translate; ``str(error)`` is the English line (logs, staff, commands).
    """

    def __init__(self, message: str, **params):
        self.message = message
        self.params = params
        super().__init__(message % params if params else message)


# --- tokens --------------------------------------------------------------------------------


def new_secret() -> str:
    """A URL-safe random secret (256 bits): invite tokens and panel browser keys."""
    return secrets.token_urlsafe(32)


def secret_digest(secret: str) -> str:
    """What the database stores: a leaked table yields no usable link or browser key.

    A plain SHA-256 suffices (no slow hash) because the secret is 256 random bits, not a password.
    """
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


# --- invite links --------------------------------------------------------------------------


@dataclass(frozen=True)
class LinkState:
    usable: bool
    # One line, shown to the person who opened the link: a message with %(name)s placeholders
    # filled from ``params`` (pairs), so the page can translate it.
    message: str
    params: tuple[tuple[str, str], ...] = ()
    # One word for staff lists: pending, accepted, expired, revoked (unknown: no such link).
    status: str = "unknown"

    @property
    def reason(self) -> str:
        return self.message % dict(self.params) if self.params else self.message

    def error(self) -> RecruitmentError:
        return RecruitmentError(self.message, **dict(self.params))


def invite_state(
    *, expires_at: datetime, used_at: datetime | None, revoked_at: datetime | None, now: datetime
) -> LinkState:
    """Whether an invite can still be redeemed; revoked wins over used, used over expired."""
    if revoked_at is not None:
        return LinkState(
            False, gettext_noop("This invite link was revoked by the study team."), (), "revoked"
        )
    if used_at is not None:
        return LinkState(
            False,
            gettext_noop("This invite link was already used; each link works once."),
            (),
            "accepted",
        )
    if expires_at <= now:
        return LinkState(
            False,
            gettext_noop("This invite link expired on %(when)s UTC."),
            (("when", f"{expires_at:%Y-%m-%d %H:%M}"),),
            "expired",
        )
    return LinkState(True, "", (), "pending")


UNKNOWN_INVITE = LinkState(
    False, gettext_noop("This invite link is not valid; check that it was copied whole.")
)


# --- panel links ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PanelEntry:
    participant_id: str
    study_id: str
    session_id: str


@dataclass(frozen=True)
class PanelParams:
    """The URL parameter names a panel uses (Prolific's by default) and the expected study id."""

    participant: str = "PROLIFIC_PID"
    study: str = "STUDY_ID"
    session: str = "SESSION_ID"
    expected_study_id: str = ""


def check_param_names(params: PanelParams) -> None:
    names = (params.participant, params.study, params.session)
    for name in names:
        if not PARAM_NAME_PATTERN.match(name or ""):
            raise RecruitmentError(
                f"parameter name {name!r} must be 1-50 letters, digits, '_', '.' or '-'"
            )
    if len(set(names)) != 3:
        raise RecruitmentError("the participant, study and session parameters need distinct names")


def parse_panel_entry(query: Mapping[str, str], params: PanelParams) -> PanelEntry:
    """The panel's identifiers from a request's parameters, validated once here.

    The participant id is required; study and session ids are stored when present, and the
    study id must equal ``expected_study_id`` when the link sets one (so a link copied into
    another panel study is refused).
    """
    participant = (query.get(params.participant) or "").strip()
    if not participant:
        raise RecruitmentError(
            gettext_noop(
                "This link must be opened from the panel: the %(name)s parameter is missing."
            ),
            name=params.participant,
        )
    values = {params.participant: participant}
    for name in (params.study, params.session):
        values[name] = (query.get(name) or "").strip()
    for name, value in values.items():
        if value and not PANEL_ID_PATTERN.match(value):
            raise RecruitmentError(
                gettext_noop(
                    "The %(name)s parameter is not a valid id "
                    "(1-64 letters, digits, '_', '.', ':' or '-')."
                ),
                name=name,
            )
    study_id = values[params.study]
    if params.expected_study_id and study_id != params.expected_study_id:
        raise RecruitmentError(
            gettext_noop("This link belongs to another panel study (%(name)s does not match)."),
            name=params.study,
        )
    return PanelEntry(participant, study_id, values[params.session])


# --- enrolment -----------------------------------------------------------------------------


def enrolment_items(
    items: Sequence[PolicyItem],
    coverage: Mapping[Hashable, int],
    *,
    policy: str,
    group: str,
    overlap_k: int,
    rng: np.random.Generator,
    quota: int | None = None,
    reserved_groups: Collection[str] = (),
    already_assigned: Collection[Hashable] = (),
) -> list[Hashable]:
    """The items a newly enrolled annotator receives from a batch, in the batch's policy.

    Annotators arrive one at a time, so instead of dividing items among a known pool (the
    batch policies in policies.py) each newcomer takes the items that most need a label:

    1. expertise: items whose match key is the annotator's group first; items reserved for
       another group (``reserved_groups``, e.g. a Korean item when Korean annotators are
       recruited) are never given; k_overlap: every item is eligible;
    2. items with fewer than ``overlap_k`` labels before items that already have k;
    3. items flagged for review, then the least-covered, ties broken by ``rng``.

    The first ``quota`` items are taken (all eligible ones when ``quota`` is None).
    """
    if policy not in ENROLMENT_POLICIES:
        raise RecruitmentError(
            f"a {policy!r} batch takes no recruits: use a k_overlap or expertise batch"
        )
    if quota is not None and quota < 1:
        raise RecruitmentError(f"items per annotator must be at least 1 (got {quota})")
    expertise = policy == "expertise"
    reserved = set(reserved_groups) - {group}
    skip = set(already_assigned)
    candidates = [
        i for i in items if i.item not in skip and not (expertise and i.match_key in reserved)
    ]
    tie_break = rng.random(len(candidates))
    order = sorted(
        range(len(candidates)),
        key=lambda n: (
            0 if (expertise and candidates[n].match_key == group) else 1,
            0 if coverage.get(candidates[n].item, 0) < overlap_k else 1,
            -candidates[n].priority,
            coverage.get(candidates[n].item, 0),
            tie_break[n],
        ),
    )
    chosen = [candidates[n].item for n in order]
    return chosen if quota is None else chosen[:quota]
