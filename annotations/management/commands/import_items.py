from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotations import services
from annotations.management.helpers import study_or_error
from annotations.manifest import ManifestInvalid
from annotations.models import Study


class Command(BaseCommand):
    help = (
        "Import generated items (JSONL manifest, see docs/formats.md) into a study; all or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("manifest", type=Path)
        parser.add_argument("--study", required=True, help="study slug")
        parser.add_argument(
            "--create", action="store_true", help="create the study if it does not exist"
        )
        parser.add_argument("--name", help="study name when creating")
        parser.add_argument("--mode", choices=[m for m, _ in Study.Mode.choices], default="t2i")
        parser.add_argument("--overlap-k", type=int, default=2)

    def handle(self, *args, manifest, study, create, name, mode, overlap_k, **options):
        manifest = Path(manifest)
        if not manifest.is_file():
            raise CommandError(f"manifest {manifest} does not exist")
        if create and not Study.objects.filter(slug=study).exists():
            target = services.study_create(
                name=name or study, slug=study, mode=mode, overlap_k=overlap_k
            )
        else:
            target = study_or_error(study)
        bar = tqdm(desc="importing", unit="item", disable=options["verbosity"] == 0)

        def progress(done, total):
            bar.total = total
            bar.n = done
            bar.refresh()

        try:
            count = services.items_import(study=target, manifest=manifest, progress=progress)
        except ManifestInvalid as exc:
            raise CommandError(str(exc)) from None
        finally:
            bar.close()
        self.stdout.write(self.style.SUCCESS(f"imported {count} items into {target.slug}"))
