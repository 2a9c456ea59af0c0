"""Store a study plan (Stage I) in a study, creating the study if asked."""

from django.core.management.base import CommandError
from django.db import transaction

from annotations import services as annotation_services
from annotations.common.study_address import study_address_problem
from annotations.management.helpers import SAMPLE_SIZE, SEED, BaseCommand, text_within
from annotations.models import Study
from generation import selectors, services
from generation.management.arguments import add_harmful_control_arguments
from generation.prompts.rephrase import RephraseError


class Command(BaseCommand):
    help = "Build and store the prompt plan of a study (taxonomy × base prompts)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--study", required=True, help="study address (letters, digits, - and _)"
        )
        parser.add_argument(
            "--create", action="store_true", help="create the study if it does not exist"
        )
        parser.add_argument("--name", default="", help="name of a created study")
        parser.add_argument("--taxonomy", help="taxonomy JSON (default: the shipped one)")
        parser.add_argument("--base", help="base prompts file (default: the shipped 108)")
        parser.add_argument(
            "--sample-size",
            type=SAMPLE_SIZE,
            help=f"draw this many base prompts ({SAMPLE_SIZE.range}; default: all)",
        )
        parser.add_argument("--sample-seed", type=SEED, default=0)
        parser.add_argument("--attributes", nargs="*", default=None, help="only these attributes")
        parser.add_argument("--missing-slot", choices=("skip", "append"), default="skip")
        parser.add_argument(
            "--generator",
            action="append",
            default=[],
            help="attach this configured generator (repeatable)",
        )
        parser.add_argument(
            "--seeds", default="0", help="seeds per prompt for attached generators, e.g. 0,1"
        )
        parser.add_argument(
            "--rephrase",
            metavar="NAME",
            help="rewrite the base prompts toward the safety boundary first (docs/generation.md)",
        )
        add_harmful_control_arguments(parser)

    def handle(self, *args, study, create, name, **options):
        text_within(name or study, Study, "name", "--name")
        record = Study.objects.filter(slug=study).first()
        if record is None and not create:
            raise CommandError(f"unknown study {study!r} (add --create to make it)")
        if record is None and (problem := study_address_problem(study)):
            raise CommandError(f"--study: {problem}; nothing written")
        try:
            # Drafted first: rephrasing calls the rewriter, and a failure must write nothing.
            draft = services.study_plan_draft(
                taxonomy_path=options["taxonomy"],
                base_prompts_path=options["base"],
                sample_size=options["sample_size"],
                sample_seed=options["sample_seed"],
                attributes=options["attributes"],
                missing_slot=options["missing_slot"],
                rephrase=options["rephrase"],
                harmful_share=options["harmful_controls"],
                harmful_seed=options["harmful_seed"],
            )
            seeds = [int(seed) for seed in options["seeds"].split(",") if seed.strip()]
            with transaction.atomic():
                record = record or annotation_services.study_create(name=name or study, slug=study)
                services.study_plan_store(study=record, draft=draft)
                for generator in options["generator"]:
                    services.study_generator_attach(study=record, name=generator, seeds=seeds)
        except RephraseError as error:
            raise CommandError(f"{error}; nothing written") from None
        except (ValueError, OSError) as error:
            raise CommandError(str(error)) from error
        summary = selectors.plan_summary(study=record)
        self.stdout.write(
            f"Plan of {record.slug}: {summary.planned} planned, {summary.skipped} skipped."
        )
        for reason, rows in summary.skip_reasons:
            self.stdout.write(f"  skipped {rows:>5}  {reason}")
        controls = draft.options["harmful_controls"]
        if controls:
            self.stdout.write(_controls_line(controls))
        if options["rephrase"]:
            rephrased = selectors.rephrasing_summary(study=record)
            self.stdout.write(
                f"Rephrased with {options['rephrase']}: {rephrased.kept} kept, "
                f"{rephrased.rejected} rejected {dict(rephrased.reasons)}."
            )


def _controls_line(controls: dict) -> str:
    line = (
        f"Harmful controls: {controls['n_pairs']} benign/harmful pairs "
        f"(share {controls['share']:g} per domain, seed {controls['seed']})."
    )
    if controls["shortfall"]:
        line += f" Fewer than asked in {sorted(controls['shortfall'])}."
    if controls["unmatched_domains"]:
        line += f" No OVERT category for {controls['unmatched_domains']}."
    return line
