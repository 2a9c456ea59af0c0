"""Stage I without the database: taxonomy × base prompts → the study plan as JSON lines."""

from django.core.management.base import BaseCommand, CommandError

from generation.prompts import (
    BasePromptError,
    TaxonomyError,
    build_prompts,
    load_base_prompts,
    load_taxonomy,
    planned_only,
    write_plan_jsonl,
)
from generation.services import sampled_base_prompts


class Command(BaseCommand):
    help = "Expand base prompts × attribute values into a plan (JSON lines, skipped rows included)."
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--taxonomy", help="taxonomy JSON (default: the shipped one)")
        parser.add_argument(
            "--base", help="base prompts: CSV (OVERT too), JSON or JSONL (default: the shipped 108)"
        )
        parser.add_argument("--out", required=True, help="where to write prompts.jsonl")
        parser.add_argument("--missing-slot", choices=("skip", "append"), default="skip")
        parser.add_argument("--sample-size", type=int, help="draw this many base prompts")
        parser.add_argument("--sample-seed", type=int, default=0)

    def handle(self, *args, taxonomy, base, out, missing_slot, sample_size, sample_seed, **options):
        try:
            loaded = load_taxonomy(taxonomy)
            prompts = sampled_base_prompts(
                load_base_prompts(base), size=sample_size, seed=sample_seed
            )
        except (TaxonomyError, BasePromptError, OSError) as error:
            raise CommandError(str(error)) from error
        plan = build_prompts(loaded, prompts, missing_slot=missing_slot)
        rows = write_plan_jsonl(plan, out)
        planned = len(planned_only(plan))
        self.stdout.write(
            f"{rows} rows written to {out}: {planned} planned, {rows - planned} skipped (reasons in skip_reason)."
        )
