"""python manage.py publish_consent --study SLUG --text-file consent.txt [--instructions-file F]

The consent text annotators agree to before invite or panel links work: the same
``consent_publish`` as the study's Recruitment page (each changed text adds the next version,
which every annotator agrees to before their next answer; the current text again adds none)."""

from pathlib import Path

from django.core.management.base import CommandError

from annotations.management.helpers import BaseCommand, study_or_error
from annotations.recruitment.consent import consent_current, consent_publish
from annotations.recruitment.rules import RecruitmentError


def _read(path: Path | None, option: str) -> str:
    if path is None:
        return ""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CommandError(f"{option} {path}: no such file") from None
    except UnicodeDecodeError:
        raise CommandError(f"{option} {path}: not UTF-8 text") from None
    except OSError as error:
        raise CommandError(f"{option} {path}: {error.strerror or error}") from None


class Command(BaseCommand):
    help = (
        "Publish a study's consent text (and optional instructions) as its next version; "
        "invite and panel links show it before an annotator starts, and every annotator "
        "agrees to a new version before their next answer (docs/annotation.md)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True)
        parser.add_argument("--text-file", type=Path, required=True, help="UTF-8 consent text")
        parser.add_argument(
            "--instructions-file", type=Path, help="UTF-8 instructions shown with the consent"
        )

    def handle(self, *args, study, text_file, instructions_file=None, **options):
        target = study_or_error(study)
        text = _read(text_file, "--text-file")
        instructions = _read(instructions_file, "--instructions-file")
        before = consent_current(study_id=target.pk)
        try:
            consent = consent_publish(study=target, consent_text=text, instructions=instructions)
        except RecruitmentError as error:
            raise CommandError(f"--text-file {text_file}: {error}") from None
        if before is not None and consent.pk == before.pk:
            self.stdout.write(
                f"consent version {consent.version} of {target.slug} already has this text: "
                "nothing published"
            )
            return
        self.stdout.write(
            self.style.SUCCESS(f"published consent version {consent.version} of {target.slug}")
        )
