"""python manage.py import_faceset DIR --set NAME [--variant mirrored]"""

from django.core.management.base import BaseCommand, CommandError

from scoring.reflect import selectors, services
from scoring.reflect.layout import FaceSetLayoutError
from scoring.reflect.protocol import VARIANTS


class Command(BaseCommand):
    help = "Import a face-only counterfactual set laid out <occupation>/<template>/<Race>_<gender>.<ext>."

    def add_arguments(self, parser):
        parser.add_argument("folder")
        parser.add_argument(
            "--set", dest="name", required=True, help="face set name (created if new)"
        )
        parser.add_argument(
            "--variant",
            default="original",
            choices=VARIANTS,
            help="import the folder as this variant of the set's templates",
        )

    def handle(self, *args, **options):
        try:
            face_set = services.faceset_import(
                folder=options["folder"], name=options["name"], variant=options["variant"]
            )
        except (FaceSetLayoutError, ValueError) as error:
            raise CommandError(f"nothing was imported. {error}") from error
        counts = selectors.faceset_counts(face_set=face_set)
        self.stdout.write(
            self.style.SUCCESS(
                f"face set {face_set.name!r}: {counts['templates']} templates in "
                f"{counts['occupations']} occupations, images by variant {counts['images_by_variant']}"
            )
        )
