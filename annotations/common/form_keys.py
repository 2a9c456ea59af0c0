"""One-time form keys: a staff form that creates something is rendered with a fresh key, and a
second submit of the same form does the work once (issue 36: four identical POSTs of People →
create accounts or New plan gave 500s or duplicates on PostgreSQL).

The key is recorded (``FormSubmission``, unique) in the transaction that does the work, before
the work: an identical submit running at the same time blocks on the unique index until the
first commits, then finds its row and answers from its ``result``; if the first rolled back
(the form was refused), the second does the work itself. The invite forms do the same with
their own rows (``annotations.recruitment.invites``).
"""

from __future__ import annotations

import secrets

from django import forms
from django.db import IntegrityError, transaction

from annotations.models import FormSubmission

KEY_LENGTH = 64


class FormKeyMismatch(ValueError):
    """The key was used by another user or for another form: the page is stale or forged."""


def new_form_key() -> str:
    """43 URL-safe characters (256 bits)."""
    return secrets.token_urlsafe(32)


def form_key_field() -> forms.CharField:
    """The hidden field a form carries its key in (optional: a client without it, such as a
    test or a script, just gets no protection against its own resubmits)."""
    return forms.CharField(max_length=KEY_LENGTH, required=False, widget=forms.HiddenInput)


class OneTimeKeyForm(forms.Form):
    """A form rendered with a fresh one-time key in ``request_key`` (the one definition every
    staff form that creates something uses; what the key protects is the service's to record)."""

    request_key = form_key_field()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.is_bound:
            self.initial["request_key"] = new_form_key()


def form_key_claim(*, key: str, purpose: str, user) -> tuple[FormSubmission | None, bool]:
    """(submission, created) for ``key``, inside the caller's transaction.

    ``created`` is True for the first submit: do the work, then ``form_key_done``. False: an
    earlier submit of the same form committed its work; answer from ``submission.result``.
    No key: (None, True), the work is done unprotected.
    """
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("form_key_claim runs inside the transaction that does the work")
    if not key:
        return None, True
    if len(key) > KEY_LENGTH:
        raise FormKeyMismatch("the form's key is too long: reload the page")
    try:
        with transaction.atomic():  # a savepoint: the unique key waits for the first submit
            return (
                FormSubmission.objects.create(key=key, purpose=purpose, created_by=user),
                True,
            )
    except IntegrityError:
        earlier = FormSubmission.objects.select_for_update().get(key=key)
    if earlier.purpose != purpose or earlier.created_by_id != getattr(user, "pk", None):
        raise FormKeyMismatch("this form was already used for something else: reload the page")
    return earlier, False


def form_key_done(submission: FormSubmission | None, result: dict) -> None:
    """Record what the first submit made, for the submits that follow it."""
    if submission is not None:
        submission.result = result
        submission.save(update_fields=["result"])
