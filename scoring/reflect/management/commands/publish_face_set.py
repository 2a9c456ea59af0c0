"""python manage.py publish_face_set --set NAME"""

from django.core.management.base import CommandError

from annotations.management.helpers import BaseCommand
from scoring.reflect import selectors, services

from ._common import face_set_or_error


class Command(BaseCommand):
    help = (
        "Publish a face set's accepted edits (made with face_edit) as its REFLECT images: every "
        "template whose ten edits are usable, with no export folder in between."
    )

    def add_arguments(self, parser):
        parser.add_argument("--set", dest="name", required=True, help="face set name or slug")

    def handle(self, *args, **options):
        face_set = face_set_or_error(options["name"])
        try:
            result = services.face_set_publish(face_set=face_set)
        except ValueError as error:
            raise CommandError(f"nothing was published. {error}") from error
        for template, why in result["skipped"]:
            self.stdout.write(f"  not published {template}: {why}")
        counts = selectors.face_set_counts(face_set=face_set)
        self.stdout.write(
            self.style.SUCCESS(
                f"face set {face_set.name!r}: published {result['templates']} templates "
                f"({result['images']} images); images by variant {counts['images_by_variant']}"
            )
        )
