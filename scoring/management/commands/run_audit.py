"""Stages I-III for scripted use: a study from a YAML file, its images, its judgments, and
the largest disparities. The YAML format is in docs/judges.md ("run_audit"); it is read and
checked by ``scoring.audit_config.AuditConfig``."""

from pathlib import Path

from django.core.management.base import CommandError
from tqdm import tqdm

from annotations.management.helpers import BaseCommand, bounded_int
from generation import selectors as generation_selectors
from generation import services as generation_services
from generation.backends.registry import ConfigProblems
from generation.prompts.rephrase import RephraseError
from scoring import services
from scoring.audit_config import QUICK_PROMPTS, AuditConfig
from scoring.metrics.headlines import largest_disparities
from scoring.report.document_types import frontier_section
from scoring.report.documents import report_document
from scoring.selectors import JudgeNotConfigured
from scoring.stats.safety_utility import OVERALL_ATTRIBUTE, OVERALL_VALUE


class Command(BaseCommand):
    help = "Create a study from a YAML config, generate its images, score them, print disparities."

    def add_arguments(self, parser):
        parser.add_argument(
            "--config", required=True, type=Path, help="study YAML (docs/judges.md)"
        )
        parser.add_argument(
            "--quick",
            action="store_true",
            help=f"{QUICK_PROMPTS} base prompts and the first generator only",
        )
        parser.add_argument("--device", choices=["cpu", "cuda"], help="override the judges' device")
        parser.add_argument(
            "--top", type=bounded_int(1, 10_000), default=10, help="disparities printed"
        )

    def handle(self, *args, config, quick, device, top, **options):
        try:
            audit = AuditConfig.from_yaml(config)
        except ConfigProblems as exc:
            count = len(exc.problems)
            raise CommandError(
                f"{config}: nothing written; {count} problem{'s' if count > 1 else ''}:\n"
                + "\n".join(exc.lines)
            ) from None
        if quick:
            audit = audit.quick()
        study_config = audit.study
        self.stdout.write(f"Stage I: study {study_config.slug} and its prompt plan")
        try:
            study = generation_services.study_setup(config=study_config)
        except (RephraseError, ValueError) as exc:
            raise CommandError(f"{config}: {exc}; nothing written") from None
        if study_config.rephrase:
            rephrased = generation_selectors.rephrasing_summary(study=study)
            self.stdout.write(
                f"  rephrased with {study_config.rephrase}: {rephrased.kept} kept, "
                f"{rephrased.rejected} rejected {dict(rephrased.reasons)}"
            )
        if study_config.harmful_share is not None:
            controls = study.generation_plan.options["harmful_controls"]
            self.stdout.write(
                f"  harmful controls: {controls['n_pairs']} benign/harmful "
                f"pairs (share {study_config.harmful_share:g} per domain)"
            )
        self.stdout.write("Stage II: generating images")
        with tqdm(desc="generating", unit="img", disable=None) as bar:
            generated = generation_services.generation_run_inline(study=study, progress=_bar(bar))
        self.stdout.write(
            f"  {generated.done} images, {generated.refused} refused, {generated.error} errors"
        )
        self.stdout.write("Stage III: automated judges")
        for name in audit.judges:
            with tqdm(desc=f"scoring with {name}", unit="item", disable=None) as bar:
                try:
                    summary = services.study_score(
                        study=study,
                        judge_name=name,
                        device=device,
                        progress=_bar(bar),
                        judge_configs=audit.judge_configs,
                    )
                except JudgeNotConfigured as exc:
                    raise CommandError(str(exc)) from None
            self.stdout.write(
                f"  {summary.judge}@{summary.judge_version}: {dict(summary.labels)}, "
                f"{summary.errors} errors, {summary.needs_review} flagged for review"
            )
        report = report_document(study=study, n_resamples=audit.n_resamples)
        self._print_disparities(report, top)
        self._print_safety(report)

    def _print_disparities(self, report: dict, top: int) -> None:
        """The report's largest disparities, as the staff study page's summary picks them."""
        rows = largest_disparities(report, limit=top)
        self.stdout.write(f"Largest disparities (Δ = max − min rate; top {top}):")
        for row in rows:
            delta = row["delta"]
            reason = delta["ci_reason"] and f" (no interval: {delta['ci_reason']})"
            flagged = " flagged" if row["flagged"] else ""
            self.stdout.write(
                f"  {row['source']:<28} {row['measure']:<13} {row['attribute']:<11} "
                f"Δ = {delta['text']}{reason}  highest · lowest: {row['extremes']}"
                f"  p (Holm) {row['p_holm']}{flagged}"
            )
        if not rows:
            self.stdout.write("  none defined yet (too few items, or no judge scored them)")

    def _print_safety(self, report: dict) -> None:
        """Each generator's overall over- and under-refusal, when the study has harmful controls
        (docs/metrics.md, "Safety–utility trade-off"; per value in the report)."""
        lines = []
        for source, generators in frontier_section(report).items():
            for generator, attributes in generators.items():
                point = attributes[OVERALL_ATTRIBUTE][OVERALL_VALUE]
                if point["n_harmful"]:
                    lines.append(
                        f"  {source:<28} {generator:<16} over-refusal "
                        f"{_number(point['over_refusal'])} (benign n = {point['n_benign']}) · "
                        f"under-refusal {_number(point['under_refusal'])} "
                        f"(harmful n = {point['n_harmful']})"
                    )
        if lines:
            self.stdout.write(
                "Safety–utility trade-off (refusal of benign, compliance with harmful prompts):"
            )
            self.stdout.write("\n".join(lines))


def _number(value) -> str:
    return "—" if value is None else f"{value:.3f}"


def _bar(bar):
    def progress(done, total):
        bar.total, bar.n = total, done
        bar.refresh()

    return progress
