from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from annotations.management.helpers import BaseCommand
from annotations.staff.people import annotator_accounts_create


class Command(BaseCommand):
    help = (
        "Create annotator accounts, all or none, and print each user name with a fresh password "
        "(tab-separated; only the hashes are stored: this is the one time they can be copied). "
        "The staff page: People (/staff/people/)."
    )

    def add_arguments(self, parser):
        parser.add_argument("usernames", nargs="+", help="one or more user names")
        parser.add_argument("--group", default="", help="e.g. Nigerian (expertise-matched batches)")
        parser.add_argument("--expertise", default="")

    def handle(self, *args, usernames, group, expertise, **options):
        try:
            made = annotator_accounts_create(usernames=usernames, group=group, expertise=expertise)
        except ValidationError as invalid:
            raise CommandError("nothing was created: " + "; ".join(invalid.messages)) from None
        for credentials in made:
            self.stdout.write(f"{credentials.username}\t{credentials.password}")
