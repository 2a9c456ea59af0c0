"""Choose the CLIP refusal threshold τ per generator from human labels, and store it."""

from django.conf import settings
from django.core.management.base import CommandError

from annotations.management.helpers import BaseCommand, study_or_error
from scoring import services
from scoring.selectors import JudgeNotConfigured


class Command(BaseCommand):
    help = "Pick τ (max F1 or Youden's J on the ROC curve) per generator from human labels."

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True, help="study slug")
        parser.add_argument(
            "--judge", help="a hard_refusal judge (default: the only one configured)"
        )
        parser.add_argument("--criterion", choices=["f1", "youden"], default="f1")

    def handle(self, *args, study, judge, criterion, **options):
        study = study_or_error(study)
        judge = judge or self._only_hard_refusal_judge()
        try:
            result = services.refusal_threshold_calibrate(
                study=study, judge_name=judge, criterion=criterion
            )
        except JudgeNotConfigured as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{result.judge}@{result.judge_version}, criterion {criterion}:")
        for row in result.thresholds:
            self.stdout.write(
                f"  {row.generator or 'all generators (not applied)':<30} τ = {row.tau:.4f}  "
                f"precision {row.precision:.3f}  recall {row.recall:.3f}  F1 {row.f1:.3f}  "
                f"J {row.youden_j:.3f}  AUC {row.auc:.3f}  n = {row.n} ({row.n_positive} refusals)"
            )
        for generator, reason in result.skipped.items():
            self.stdout.write(
                self.style.WARNING(f"  {generator or 'all generators'}: skipped ({reason})")
            )
        if not result.thresholds:
            raise CommandError("no threshold could be chosen: label more items or score them first")
        self.stdout.write(
            self.style.SUCCESS("Stored; rescore the study to apply the per-generator τ.")
        )

    def _only_hard_refusal_judge(self) -> str:
        names = [n for n, c in settings.ACRB_JUDGES.items() if c.get("kind") == "hard_refusal"]
        if len(names) != 1:
            raise CommandError(
                f"name the judge with --judge (hard_refusal judges: {names or 'none'})"
            )
        return names[0]
