"""FOCUS face-only sets: edit every source photo to every target group, QC, export."""

from pathlib import Path

from django.core.management.base import CommandError
from tqdm import tqdm

from annotations.management.helpers import SEED, BaseCommand, bounded_float
from generation import selectors
from generation.faces import services as face_services


class Command(BaseCommand):
    help = (
        "Edit each source photo (DIR/<occupation>/<template>.png) to every race × gender group "
        "with the FOCUS instruction, QC every edit, print the QC per template and export the "
        "usable templates to OUT/<occupation>/<template>/<Race>_<gender>.png."
    )

    def add_arguments(self, parser):
        parser.add_argument("--sources", required=True, type=Path)
        parser.add_argument(
            "--generator", required=True, help="an editing generator from ACRB_GENERATORS"
        )
        parser.add_argument("--out", required=True, type=Path)
        parser.add_argument(
            "--set", dest="slug", help="face-set slug (default: the sources folder name)"
        )
        parser.add_argument(
            "--name", default="", help="the set's name (default: the slug; names are unique)"
        )
        parser.add_argument(
            "--template-file", type=Path, help="instruction text with {TARGET_GROUP}"
        )
        parser.add_argument("--max-outside-diff", type=bounded_float(0, 1))
        parser.add_argument("--min-ratio", type=bounded_float(0, 1_000))
        parser.add_argument("--seed", type=SEED, default=0)

    def handle(self, *args, sources, generator, out, slug, name, template_file, seed, **options):
        if not sources.is_dir():
            raise CommandError(f"{sources}: not a folder")
        qc = {
            key: options[key]
            for key in ("max_outside_diff", "min_ratio")
            if options[key] is not None
        }
        try:
            face_set = face_services.face_set_create(
                slug=slug or sources.name,
                name=name,
                generator_name=generator,
                seed=seed,
                qc_options=qc,
                instruction_template=template_file.read_text(encoding="utf-8")
                if template_file
                else None,
            )
        except (ValueError, OSError) as error:
            raise CommandError(str(error)) from error
        added = face_services.face_templates_import(face_set=face_set, sources=sources)
        self.stdout.write(f"Face set {face_set.slug}: {added} source photos added or changed.")
        with tqdm(desc="editing", unit="edit", disable=None) as bar:

            def progress(done, total):
                bar.total, bar.n = total, done
                bar.refresh()

            face_services.face_set_edit(face_set=face_set, progress=progress)
        self._report(face_set)
        report = face_services.face_set_export(face_set=face_set, out_dir=out)
        self.stdout.write(
            f"Exported {report.templates} templates ({report.images} images) to {out}."
        )
        for template, why in report.skipped:
            self.stdout.write(f"  not exported {template}: {why}")

    def _report(self, face_set):
        self.stdout.write("template                  edits flagged  inside outside  median ratio")
        for row in selectors.face_qc_rows(face_set=face_set):
            summary = row.summary
            name = f"{row.template.occupation}/{row.template.name}"
            self.stdout.write(
                f"{name:<25} {len(row.edits):>5} {summary.flagged:>7}  {summary.mean_inside_diff:6.3f}"
                f" {summary.mean_outside_diff:7.3f}  {summary.median_ratio:12.2f}"
            )
