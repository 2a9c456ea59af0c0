"""People: annotator accounts made, their access reset, and the list staff read
(docs/annotation.md, "People: annotator accounts").

Pausing and resuming are the quality actions (``annotations.quality.actions``), invite links the
recruitment ones (``annotations.recruitment.invites``): this module adds only what they lack.
A password made here is returned once, to be shown once; only its hash is stored.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count, Q

from annotations import services
from annotations.common import form_keys
from annotations.models import Annotator

MAX_ACCOUNTS_PER_REQUEST = 200
_USERNAME = UnicodeUsernameValidator()


@dataclass(frozen=True)
class Credentials:
    username: str
    password: str


def new_password() -> str:
    """A password to hand over once: 16 URL-safe characters (96 bits)."""
    return secrets.token_urlsafe(12)


def usernames_parse(text: str) -> list[str]:
    """One name per line or comma; blanks dropped."""
    return [
        name.strip()
        for line in (text or "").splitlines()
        for name in line.split(",")
        if name.strip()
    ]


def annotator_accounts_create(
    *,
    usernames: list[str],
    group: str = "",
    expertise: str = "",
    created_by=None,
    form_key: str = "",
) -> list[Credentials]:
    """Make an annotator account for each name, each with a fresh password, or none at all.

    ValidationError lists every problem at once (a bad or repeated name, a name already taken,
    a group too long). ``form_key`` (the People form's one-time key) makes a resubmit of the same
    form make no second set of accounts: it gives the accounts the first submit made new
    passwords instead (the person who submitted twice never saw the first answer's), as long as
    nobody has logged in with them yet.
    """
    with transaction.atomic():
        try:
            submission, first = form_keys.form_key_claim(
                key=form_key, purpose="annotator_accounts", user=created_by
            )
        except form_keys.FormKeyMismatch as mismatch:
            raise ValidationError(str(mismatch)) from None
        if not first:
            return _accounts_reissue(submission.result.get("usernames", []))
        problems = _username_problems(usernames)
        problems += _length_problems(group=group.strip(), expertise=expertise.strip())
        if problems:
            raise ValidationError(problems)
        made = []
        try:
            with transaction.atomic():
                for username in usernames:
                    password = new_password()
                    services.annotator_create(
                        username=username,
                        group=group.strip(),
                        expertise=expertise.strip(),
                        password=password,
                    )
                    made.append(Credentials(username, password))
        except IntegrityError:  # another form took one of the names meanwhile
            raise ValidationError(
                "one of these names was taken a moment ago by another request; check the list"
            ) from None
        form_keys.form_key_done(submission, {"usernames": usernames})
    return made


def _accounts_reissue(usernames: list[str]) -> list[Credentials]:
    """New passwords for the accounts an earlier submit of the same form made, if still unused."""
    users = (
        get_user_model()
        .objects.select_for_update(of=("self",))
        .filter(username__in=usernames, last_login__isnull=True, annotator__isnull=False)
    )
    made = []
    for user in sorted(users, key=lambda u: usernames.index(u.get_username())):
        password = new_password()
        user.set_password(password)
        user.save(update_fields=["password"])
        made.append(Credentials(user.get_username(), password))
    if not made:
        raise ValidationError(
            "this form already created its accounts, and they have been used since: reset an "
            "account's access below for a new password"
        )
    return made


def _length_problems(**values: str) -> list[str]:
    """Each value against its Annotator column: SQLite would store a 130-character group that
    PostgreSQL refuses, so the app checks, on every path (page and command)."""
    problems = []
    for name, value in values.items():
        limit = Annotator._meta.get_field(name).max_length
        if len(value) > limit:
            problems.append(f"{name}: {len(value)} characters, over the limit of {limit}")
    return problems


def _username_problems(usernames: list[str]) -> list[str]:
    if not usernames:
        return ["give at least one user name"]
    if len(usernames) > MAX_ACCOUNTS_PER_REQUEST:
        return [f"at most {MAX_ACCOUNTS_PER_REQUEST} accounts at a time (got {len(usernames)})"]
    problems, seen = [], set()
    for name in usernames:
        if len(name) > 150:
            problems.append(f"{name[:20]}…: longer than 150 characters")
            continue
        try:
            _USERNAME(name)
        except ValidationError:
            problems.append(f"{name!r}: only letters, digits and @ . + - _ are allowed")
            continue
        if name in seen:
            problems.append(f"{name!r} is listed twice")
        seen.add(name)
    taken = get_user_model().objects.filter(username__in=seen).values_list("username", flat=True)
    problems += [f"{name!r} is already an account" for name in sorted(taken)]
    return problems


def annotator_access_reset(*, annotator: Annotator, reset_by=None) -> Credentials:
    """A new password for the annotator; the old one and every open session stop working
    (Django signs sessions with the password hash). Staff accounts are not reset here."""
    with transaction.atomic():
        user = get_user_model().objects.select_for_update().get(pk=annotator.user_id)
        if user.is_staff or user.is_superuser:
            raise ValidationError(f"{user.get_username()} is a staff account; use the admin")
        password = new_password()
        user.set_password(password)
        user.save(update_fields=["password"])
        if reset_by is not None:
            LogEntry.objects.log_actions(
                user_id=reset_by.pk,
                queryset=[user],
                action_flag=CHANGE,
                change_message="access reset from the People page (new password)",
                single_object=True,
            )
    return Credentials(user.get_username(), password)


def annotator_list():
    """Every annotator with their answered and open assignments (one query)."""
    return (
        Annotator.objects.select_related("user")
        .annotate(
            answered=Count("assignments", filter=Q(assignments__answered_at__isnull=False)),
            open=Count(
                "assignments",
                filter=Q(assignments__answered_at__isnull=True, assignments__is_active=True),
            ),
        )
        .order_by("-is_active", "user__username")
    )


def annotator_by_username(username: str) -> Annotator | None:
    return Annotator.objects.select_related("user").filter(user__username=username).first()
