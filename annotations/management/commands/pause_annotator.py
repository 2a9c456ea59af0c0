from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from annotations.management.helpers import BaseCommand
from annotations.quality.actions import annotator_pause, annotator_resume
from annotations.staff.people import annotator_by_username


class Command(BaseCommand):
    help = (
        "Pause an annotator (their open items go to the batch's other annotators, or are "
        "withdrawn), or let them work again with --resume. The staff page: People → Pause."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--resume", action="store_true", help="let them work again")
        parser.add_argument("--reason", default="")

    def handle(self, *args, username, resume, reason, **options):
        annotator = annotator_by_username(username)
        if annotator is None:
            raise CommandError(f"no annotator is called {username!r}")
        act = annotator_resume if resume else annotator_pause
        try:
            review = act(annotator=annotator, user=None, reason=reason)
        except ValidationError as invalid:
            raise CommandError("nothing changed: " + " ".join(invalid.messages)) from None
        if resume:
            self.stdout.write(f"{username} may work again")
        else:
            self.stdout.write(
                f"{username} paused; {review.moved_assignments} open item(s) handed on or withdrawn"
            )
