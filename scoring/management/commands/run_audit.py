"""Stages I-III for scripted use: a study from a YAML file, its images, its judgments, and
the headline disparities. The YAML format is in docs/judges.md ("run_audit")."""

from pathlib import Path

import yaml
from django.core.management.base import CommandError
from tqdm import tqdm

from annotations.management.helpers import BaseCommand, bounded_int
from generation import selectors as generation_selectors
from generation import services as generation_services
from generation.prompts.rephrase import RephraseError
from scoring import services
from scoring.metrics.document import metrics_document
from scoring.report.charts import MEASURES
from scoring.selectors import JudgeNotConfigured
from scoring.stats.bootstrap import DEFAULT_N_RESAMPLES

QUICK_PROMPTS = 2


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
        raw = self._read(config)
        n_resamples = _n_resamples(raw, config)
        study_raw = dict(raw["study"])
        if "rephrase" in raw:  # a rewriter's name or {name: config}, docs/generation.md
            study_raw["rephrase"] = raw["rephrase"]
        if "harmful_controls" in raw:  # true, a share, or {share, seed}; docs/generation.md
            study_raw["harmful_controls"] = raw["harmful_controls"]
        if quick:
            study_raw = quick_study(study_raw)
        try:
            study_config = generation_services.StudyConfig.from_dict(
                study_raw, base_dir=config.parent
            )
        except ValueError as exc:
            raise CommandError(f"{config}: study: {exc}") from None
        judges = judges_by_name(raw.get("judges") or {})
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
            controls = study.generation_plan.options.get("harmful_controls") or {}
            self.stdout.write(
                f"  harmful controls: {controls.get('n_pairs', 0)} benign/harmful "
                f"pairs (share {study_config.harmful_share:g} per domain)"
            )
        self.stdout.write("Stage II: generating images")
        with tqdm(desc="generating", unit="img", disable=None) as bar:
            generated = generation_services.generation_run_inline(study=study, progress=_bar(bar))
        self.stdout.write(
            f"  {generated.done} images, {generated.refused} refused, {generated.error} errors"
        )
        self.stdout.write("Stage III: automated judges")
        for name, judge_config in judges.items():
            with tqdm(desc=f"scoring with {name}", unit="item", disable=None) as bar:
                try:
                    summary = services.study_score(
                        study=study,
                        judge_name=name,
                        device=device,
                        progress=_bar(bar),
                        judge_configs=judge_config,
                    )
                except JudgeNotConfigured as exc:
                    raise CommandError(str(exc)) from None
            self.stdout.write(
                f"  {summary.judge}@{summary.judge_version}: {dict(summary.labels)}, "
                f"{summary.errors} errors, {summary.needs_review} flagged for review"
            )
        metrics = metrics_document(study=study, n_resamples=n_resamples)
        self._print_disparities(metrics, top)
        self._print_safety(metrics)

    def _read(self, path: Path) -> dict:
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise CommandError(f"cannot read {path}: {exc}") from None
        if not isinstance(raw, dict) or not isinstance(raw.get("study"), dict):
            raise CommandError(f"{path}: needs a 'study:' mapping (docs/judges.md)")
        return raw

    def _print_disparities(self, metrics: dict, top: int) -> None:
        rows = headline_disparities(metrics)
        self.stdout.write(
            f"Headline disparities (Δ = max − min rate; {len(rows)} defined, top {top}):"
        )
        for row in rows[:top]:
            interval = (
                f"[{_number(row['low'])}, {_number(row['high'])}]"
                if row["low"] is not None
                else f"(no interval: {row['ci_reason_code'] or 'not computed'})"
            )
            self.stdout.write(
                f"  {row['source']:<28} {row['measure']:<13} {row['attribute']:<11} Δ = {row['delta']:.3f} "
                f"{interval}  max {row['max_value']} · min {row['min_value']}"
            )
        if not rows:
            self.stdout.write("  none defined yet (too few items, or no judge scored them)")

    def _print_safety(self, metrics: dict) -> None:
        """Each generator's overall over- and under-refusal, when the study has harmful controls
        (docs/metrics.md, "Safety–utility trade-off"; per value in the report)."""
        lines = []
        for source, generators in (metrics.get("frontier") or {}).items():
            for generator, attributes in generators.items():
                point = (attributes.get("overall") or {}).get("all") or {}
                if point.get("n_harmful"):
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


def quick_study(study_raw: dict) -> dict:
    """A few base prompts and the first generator."""
    generators = study_raw.get("generators") or {}
    first = (
        dict(list(generators.items())[:1]) if isinstance(generators, dict) else list(generators)[:1]
    )
    size = study_raw.get("sample_size")
    return {
        **study_raw,
        "generators": first,
        "sample_size": QUICK_PROMPTS if size is None else min(size, QUICK_PROMPTS),
    }


def judges_by_name(raw) -> dict[str, dict | None]:
    """``judges:`` as a list of configured names, or a mapping name -> config (or null)."""
    if isinstance(raw, list):
        return {name: None for name in raw}
    return {name: ({name: config} if config else None) for name, config in raw.items()}


def headline_disparities(metrics: dict) -> list[dict]:
    rows = []
    for source, measures in metrics["rates"].items():
        for measure in MEASURES:
            for attribute, block in (measures.get(measure) or {}).items():
                if block.get("delta") is None:
                    continue
                rows.append(
                    {
                        "source": source,
                        "measure": measure,
                        "attribute": attribute,
                        "delta": block["delta"],
                        "low": block.get("delta_ci_low"),
                        "high": block.get("delta_ci_high"),
                        "max_value": block.get("max_value"),
                        "ci_reason_code": block.get("delta_ci_reason_code"),
                        "min_value": block.get("min_value"),
                    }
                )
    return sorted(rows, key=lambda row: -row["delta"])


def _number(value) -> str:
    return "—" if value is None else f"{value:.3f}"


def _bar(bar):
    def progress(done, total):
        bar.total, bar.n = total, done
        bar.refresh()

    return progress


def _n_resamples(raw: dict, config) -> int:
    """The config's ``n_resamples`` (``n_bootstrap``, the earlier spelling, still accepted)."""
    value = raw.get("n_resamples", raw.get("n_bootstrap", DEFAULT_N_RESAMPLES))
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CommandError(f"{config}: n_resamples must be a whole number ≥ 0, got {value!r}")
    return value
