import tempfile
from pathlib import Path

from django.core.management.base import CommandError
from django.db import transaction
from tqdm import tqdm

from annotations import services
from annotations.common.study_address import study_address_problem
from annotations.imports import importers
from annotations.imports.manifest import ManifestInvalid
from annotations.imports.uploads import UploadInvalid, unpack_upload
from annotations.management.helpers import (
    OVERLAP_K,
    BaseCommand,
    file_error,
    study_or_error,
    text_within,
)
from annotations.models import Study


class Command(BaseCommand):
    help = (
        "Import generated items into a study, all or nothing: a JSONL manifest (docs/formats.md) "
        "or a .zip holding one manifest and its images."
    )

    def add_arguments(self, parser):
        parser.add_argument("manifest", type=Path)
        parser.add_argument(
            "--study", required=True, help="study address (letters, digits, - and _)"
        )
        parser.add_argument(
            "--create", action="store_true", help="create the study if it does not exist"
        )
        parser.add_argument("--name", help="study name when creating")
        parser.add_argument("--mode", choices=[m for m, _ in Study.Mode.choices], default="t2i")
        parser.add_argument(
            "--overlap-k",
            type=OVERLAP_K,
            default=2,
            help=f"annotators per item of a created study ({OVERLAP_K.range})",
        )

    def handle(self, *args, manifest, study, create, name, mode, overlap_k, **options):
        manifest = Path(manifest)
        if create and (problem := study_address_problem(study)):
            raise CommandError(f"--study: {problem}; nothing imported")
        text_within(name or study, Study, "name", "--name")
        if not manifest.is_file():
            raise file_error(str(manifest), "no such file")
        # One transaction: a study made by --create is rolled back with a failed import, so
        # "nothing was imported" leaves no empty study behind either.
        with transaction.atomic():
            if create and not Study.objects.filter(slug=study).exists():
                target = services.study_create(
                    name=name or study, slug=study, mode=mode, overlap_k=overlap_k
                )
            else:
                target = study_or_error(study)
            with tempfile.TemporaryDirectory(prefix="acrb-import-") as workdir:
                try:
                    count = self._import(target, manifest, Path(workdir), options["verbosity"])
                except ManifestInvalid as exc:
                    raise file_error(str(manifest), exc) from None
                except UploadInvalid as exc:
                    message = str(exc).removeprefix(f"{manifest}: ")
                    raise file_error(str(manifest), message) from None
                except OSError as exc:
                    raise file_error(str(manifest), exc.strerror or exc) from None
        self.stdout.write(self.style.SUCCESS(f"imported {count} items into {target.slug}"))

    def _import(self, study: Study, manifest: Path, workdir: Path, verbosity: int) -> int:
        # The same bundle the web upload takes; a CSV or any other file is one line saying so.
        manifest = unpack_upload(
            manifest,
            workdir,
            display_name=str(manifest),
            max_member_bytes=services.image_limits().max_bytes,
        )
        bars = []  # started at the first item written: a file refused while parsing shows none

        def progress(done, total):
            if not bars:
                bars.append(tqdm(desc="importing", unit="item", disable=verbosity == 0))
            bars[0].total = total
            bars[0].n = done
            bars[0].refresh()

        try:
            return importers.items_import(study=study, manifest=manifest, progress=progress)
        finally:
            for bar in bars:
                bar.close()
