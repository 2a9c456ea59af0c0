"""python manage.py import_face_set DIR --set NAME [--variant mirrored] [--protocol FILE]"""

import json

from django.core.management.base import CommandError

from annotations.management.helpers import BaseCommand
from scoring.reflect import selectors, services
from scoring.reflect.layout import FaceSetLayoutError
from scoring.reflect.protocol import VARIANTS, ProtocolError


class Command(BaseCommand):
    help = (
        "Import a face-only counterfactual set laid out <occupation>/<template>/<Race>_<gender>.<ext>"
        " (or a CSV manifest). Nothing is imported unless the whole set is valid."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "folder", nargs="?", help="<occupation>/<template>/<Race>_<gender>.<ext>"
        )
        parser.add_argument(
            "--manifest", help="a CSV manifest instead of a folder (docs/reflect.md)"
        )
        parser.add_argument(
            "--set", dest="name", required=True, help="face set name or slug (created if new)"
        )
        parser.add_argument(
            "--variant",
            default="original",
            choices=VARIANTS,
            help="import the images as this variant of the set's templates",
        )
        parser.add_argument(
            "--protocol", help="protocol.json for a new set (default: the shipped one)"
        )

    def handle(self, *args, **options):
        if bool(options["folder"]) == bool(options["manifest"]):
            raise CommandError("give a folder or --manifest FILE.csv")
        try:
            protocol = None
            if options["protocol"]:
                with open(options["protocol"], encoding="utf-8") as handle:
                    protocol = json.load(handle)
            face_set = services.face_set_import(
                name=options["name"],
                folder=options["folder"],
                manifest=options["manifest"],
                variant=options["variant"],
                protocol=protocol,
            )
        except (FaceSetLayoutError, ProtocolError, ValueError, OSError) as error:
            raise CommandError(f"nothing was imported. {error}") from error
        counts = selectors.face_set_counts(face_set=face_set)
        self.stdout.write(
            self.style.SUCCESS(
                f"face set {face_set.name!r}: {counts['templates']} templates in "
                f"{counts['occupations']} occupations, images by variant {counts['images_by_variant']}"
            )
        )
