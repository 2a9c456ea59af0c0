from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from annotations.management.helpers import BaseCommand
from annotations.staff.people import annotator_access_reset, annotator_by_username


class Command(BaseCommand):
    help = (
        "Give an annotator a new password and sign them out everywhere; prints the password "
        "once. The staff page: People → Reset access."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")

    def handle(self, *args, username, **options):
        annotator = annotator_by_username(username)
        if annotator is None:
            raise CommandError(f"no annotator is called {username!r}")
        try:
            credentials = annotator_access_reset(annotator=annotator)
        except ValidationError as invalid:
            raise CommandError("nothing changed: " + " ".join(invalid.messages)) from None
        self.stdout.write(f"{credentials.username}\t{credentials.password}")
