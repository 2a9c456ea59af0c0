from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from annotations.management.helpers import BaseCommand, bounded_float, study_or_error
from scoring import selectors, services
from scoring.stats.study_rates import MEASURES

DELTA = bounded_float(0, 1, low_open=True)


class Command(BaseCommand):
    help = (
        "Set or show the equivalence margin δ of a study's outcomes (docs/metrics.md, "
        "'Equivalence within δ'): the largest difference between two values' rates that still "
        "counts as no disparity. Set it before any human label exists; a δ set later is kept "
        "in its history and flagged in the report. Without --delta, lists the current margins."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True)
        parser.add_argument("--outcome", choices=MEASURES, help="the outcome δ applies to")
        parser.add_argument(
            "--delta", type=DELTA, help="δ, strictly between 0 and 1 (default 0.05 when unset)"
        )

    def handle(self, *args, study, outcome, delta, **options):
        study = study_or_error(study)
        if delta is not None:
            if outcome is None:
                raise CommandError("--delta needs --outcome (one of: " + ", ".join(MEASURES) + ")")
            try:
                row = services.equivalence_margin_set(
                    study=study, outcome=outcome, delta_margin=delta
                )
            except ValidationError as exc:
                raise CommandError(exc.messages[0]) from None
            if row is None:
                self.stdout.write(f"δ for {outcome} in {study.slug} is already {delta}.")
            else:
                late = " (human labels already exist: the report flags it)"
                self.stdout.write(
                    f"δ for {outcome} in {study.slug} is now {row.delta_margin}"
                    + (late if row.labels_existed else "")
                    + "."
                )
        for name, margin in selectors.equivalence_margins(study=study).items():
            if outcome is not None and name != outcome:
                continue
            origin = "default" if margin["default"] else f"set {margin['set_at'][:16]}"
            if margin["set_by"]:
                origin += f" by {margin['set_by']}"
            flag = "; set after data were seen" if margin["set_after_data"] else ""
            self.stdout.write(f"{name}: δ = {margin['delta_margin']} ({origin}{flag})")
