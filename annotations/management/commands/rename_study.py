"""python manage.py rename_study OLD_ADDRESS NEW_ADDRESS

Give a study a new address (slug). The way out for a study stored under an address no page
can open (spaces, brackets: the ``annotations.W001`` check and the staff home list them with
this command). See docs/annotation.md#study-addresses."""

from django.core.management.base import CommandError

from annotations import services
from annotations.common.study_address import StudyAddressInvalid
from annotations.management.helpers import BaseCommand, study_or_error


class Command(BaseCommand):
    help = (
        "Give a study a new address (letters, digits, '-' and '_'); the old address is matched "
        "exactly, quoted as the staff home or `manage.py check --database default` prints it."
    )

    def add_arguments(self, parser):
        parser.add_argument("old", help="the study's current address")
        parser.add_argument("new", help="its new address, e.g. my-study-2026")

    def handle(self, *args, old, new, **options):
        study = study_or_error(old)
        try:
            services.study_rename(study=study, slug=new)
        except StudyAddressInvalid as error:
            raise CommandError(f"nothing changed: {error}") from None
        self.stdout.write(self.style.SUCCESS(f"study {old!r} is now at {new!r}"))
