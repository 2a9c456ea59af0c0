"""Stage I without the database: taxonomy × base prompts → the study plan as JSON lines,
optionally rephrased toward the safety boundary by a configured rewriter first."""

from pathlib import Path

from django.core.management.base import CommandError

from annotations.management.helpers import SAMPLE_SIZE, SEED, BaseCommand, output_file_or_error
from generation.management.arguments import add_harmful_control_arguments
from generation.prompts import (
    BasePromptError,
    TaxonomyError,
    build_prompts,
    controls_for_plan,
    load_base_prompts,
    load_taxonomy,
    planned_only,
    write_plan_jsonl,
)
from generation.prompts.rephrase import (
    RECORD_FORMATS,
    RephraseCache,
    RephraseError,
    apply_rephrasings,
    write_records,
)
from generation.services import base_prompts_rephrase, rewriter_config_resolve, sampled_base_prompts


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
        parser.add_argument("--sample-size", type=SAMPLE_SIZE, help="draw this many base prompts")
        parser.add_argument("--sample-seed", type=SEED, default=0)
        parser.add_argument(
            "--rephrase",
            metavar="NAME",
            help="rewrite the base prompts toward the safety boundary first, with this rewriter "
            "(rewriters: in ACRB_BACKENDS_FILE; docs/generation.md)",
        )
        parser.add_argument(
            "--rephrase-out",
            type=Path,
            help="kept and rejected rewrites, .csv or .jsonl (default: <out>.rephrase.jsonl)",
        )
        add_harmful_control_arguments(parser)
        parser.add_argument(
            "--rephrase-cache",
            type=Path,
            help="the rewriter's answers (default: var/rephrase_cache.jsonl, shared with the site)",
        )

    def handle(
        self,
        *args,
        taxonomy,
        base,
        out,
        missing_slot,
        sample_size,
        sample_seed,
        rephrase,
        rephrase_out,
        rephrase_cache,
        harmful_controls,
        harmful_seed,
        **options,
    ):
        output_file_or_error(out)
        records_path = rephrase_out or Path(f"{out}.rephrase.jsonl")
        if rephrase and records_path.suffix.lower().lstrip(".") not in RECORD_FORMATS:
            raise CommandError(f"--rephrase-out {records_path}: use a .csv or .jsonl file")
        try:
            loaded = load_taxonomy(taxonomy)
            prompts = sampled_base_prompts(
                load_base_prompts(base), size=sample_size, seed=sample_seed
            )
            rewriter = rewriter_config_resolve(name=rephrase) if rephrase else None
        except (TaxonomyError, BasePromptError, ValueError, OSError) as error:
            raise CommandError(str(error)) from error
        records = []
        if rewriter is not None:
            cache = RephraseCache(rephrase_cache) if rephrase_cache else None
            try:
                records = base_prompts_rephrase(prompts, config=rewriter, cache=cache)
            except RephraseError as error:
                raise CommandError(f"{error}; nothing written") from None
            prompts = apply_rephrasings(prompts, records)
        controls = None
        if harmful_controls is not None:
            try:
                controls = controls_for_plan(
                    prompts, share=harmful_controls, seed=harmful_seed, missing_slot=missing_slot
                )
            except (BasePromptError, ValueError, OSError) as error:
                raise CommandError(str(error)) from error
            prompts = [*prompts, *controls.prompts]
        plan = build_prompts(loaded, prompts, missing_slot=missing_slot)
        rows = write_plan_jsonl(plan, out)
        planned = len(planned_only(plan))
        self.stdout.write(
            f"{rows} rows written to {out}: {planned} planned, {rows - planned} skipped (reasons in skip_reason)."
        )
        if controls is not None:
            harmful = sum(row.intent == "harmful" for row in planned_only(plan))
            self.stdout.write(
                f"Harmful controls: {controls.options['n_pairs']} benign/harmful pairs, "
                f"{harmful} harmful rows planned (intent in each row)."
            )
        if rewriter is not None:
            write_records(records, records_path)
            kept = sum(record.kept for record in records)
            self.stdout.write(
                f"Rephrased with {rewriter.name} ({rewriter.model}): {kept} kept, "
                f"{len(records) - kept} rejected (reasons in {records_path})."
            )
