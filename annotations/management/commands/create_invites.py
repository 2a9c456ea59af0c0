from django.conf import settings
from django.core.management.base import CommandError

from annotations.management.helpers import (
    BaseCommand,
    bounded_float,
    bounded_int,
    http_base_url,
    study_or_error,
    text_within,
)
from annotations.recruitment.invites import (
    MAX_INVITE_DAYS,
    MAX_INVITES_PER_REQUEST,
    invite_links_create,
)
from annotations.recruitment.models import InviteLink
from annotations.recruitment.rules import DEFAULT_INVITE_DAYS, RecruitmentError


class Command(BaseCommand):
    help = (
        "Create single-use, expiring invite links for a batch and a group, and print them "
        "(only their digests are stored: this is the one time they can be copied)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True)
        parser.add_argument("--batch", required=True, help="the batch's name or id")
        parser.add_argument("--group", default="", help="e.g. Nigerian")
        parser.add_argument(
            "--count",
            type=bounded_int(1, MAX_INVITES_PER_REQUEST),
            default=1,
            help=f"links to make, 1 to {MAX_INVITES_PER_REQUEST}",
        )
        parser.add_argument(
            "--days",
            type=bounded_float(0, MAX_INVITE_DAYS, low_open=True),
            default=DEFAULT_INVITE_DAYS,
            help=f"the links expire after this many days (at most {MAX_INVITE_DAYS})",
        )
        parser.add_argument("--note", default="", help="e.g. who the link is for")
        parser.add_argument(
            "--language",
            default="",
            choices=["", *(code for code, _ in settings.LANGUAGES)],
            help="the survey language the invitee starts in (default: their browser's)",
        )
        parser.add_argument(
            "--base-url",
            required=True,
            type=http_base_url,
            help="where the app is served, e.g. https://acrb.example.org",
        )

    def handle(self, *args, study, batch, group, count, days, note, language, base_url, **options):
        text_within(group.strip(), InviteLink, "group", "--group")
        text_within(note.strip(), InviteLink, "note", "--note")
        target = study_or_error(study)
        batches = target.batches.all()
        chosen = batches.filter(pk=int(batch)).first() if batch.isdigit() else None
        chosen = chosen or batches.filter(name=batch).first()
        if chosen is None:
            known = ", ".join(f"{b.pk} {b.name!r}" for b in batches[:20]) or "none"
            raise CommandError(f"unknown batch {batch!r} in study {target.slug!r} (known: {known})")
        try:
            made = invite_links_create(
                batch=chosen, group=group, count=count, days=days, note=note, language=language
            )
        except RecruitmentError as exc:
            raise CommandError(str(exc)) from None
        for _, token in made:
            self.stdout.write(f"{base_url.rstrip('/')}/join/{token}/")
