from django.core.management.base import CommandError

from annotations import services
from annotations.management.helpers import BaseCommand, study_or_error
from annotations.models import Annotator, Batch
from annotations.policies import PolicyError
from annotations.qualification import rules as qualification_rules
from annotations.qualification import status as qualification_status
from annotations.staff import batch_subset


class Command(BaseCommand):
    help = (
        "Create an annotation batch with a policy (k_overlap, expertise or validate-judge) for "
        "the named annotators."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True)
        parser.add_argument("--name", required=True)
        parser.add_argument(
            "--policy",
            # Plain strings: argparse prints choices with repr(), which for the enum members
            # read "Batch.Policy.K_OVERLAP".
            type=lambda text: text.replace("-", "_"),
            choices=[
                str(p.value)
                for p in (
                    Batch.Policy.K_OVERLAP,
                    Batch.Policy.EXPERTISE,
                    Batch.Policy.VALIDATE_JUDGE,
                )
            ],
            default=str(Batch.Policy.K_OVERLAP.value),
            help="validate-judge draws --budget items, more often where the judges are unsure",
        )
        parser.add_argument(
            "--budget",
            type=int,
            help="items humans label (required by validate-judge; a uniform sample otherwise)",
        )
        parser.add_argument(
            "--min-per-value",
            type=int,
            help="validate-judge: items per attribute value at least (default: budget / 2 / values)",
        )
        parser.add_argument(
            "--annotators", required=True, help="comma-separated usernames, or 'all'"
        )
        parser.add_argument("--k", type=int)
        parser.add_argument("--seed", type=int)
        parser.add_argument("--gold-per-annotator", type=int, default=0)
        parser.add_argument(
            "--gold-rate",
            type=float,
            default=0.0,
            help="share of each annotator's queue that is gold, at random positions (e.g. 0.05)",
        )
        # The optional qualification round (docs/annotation.md#qualification-round).
        parser.add_argument(
            "--qualification-items",
            type=int,
            default=0,
            help="gold items each annotator answers first; the batch opens only if they pass",
        )
        parser.add_argument(
            "--qualification-pass-mark",
            type=float,
            help="share of qualification answers that must match the gold label, in (0, 1]",
        )
        parser.add_argument(
            "--qualification-attempts",
            type=int,
            default=1,
            help="attempts each annotator has, each with new gold items (default 1)",
        )
        # Batches from a subset (docs/annotation.md): the new-batch page's filter and preview.
        batch_subset.add_subset_arguments(parser)
        parser.add_argument(
            "--preview", action="store_true", help="print each annotator's workload; create nothing"
        )

    def handle(
        self,
        *args,
        study,
        name,
        policy,
        annotators,
        k,
        seed,
        gold_per_annotator,
        gold_rate,
        budget,
        min_per_value,
        qualification_items,
        qualification_pass_mark,
        qualification_attempts,
        **options,
    ):
        target = study_or_error(study)
        requirement = self._requirement(
            target, qualification_items, qualification_pass_mark, qualification_attempts
        )
        chosen = Annotator.objects.filter(is_active=True)
        if annotators != "all":
            names = [n.strip() for n in annotators.split(",") if n.strip()]
            chosen = chosen.filter(user__username__in=names)
            missing = set(names) - set(chosen.values_list("user__username", flat=True))
            if missing:
                raise CommandError(f"unknown annotators: {', '.join(sorted(missing))}")
        try:
            item_ids, described = batch_subset.subset_from_options(target, options)
        except ValueError as exc:
            raise CommandError(f"nothing was created: {exc}") from None
        if options["preview"]:
            gold = {
                "gold_per_annotator": gold_per_annotator,
                "gold_rate": gold_rate,
                "budget": budget,
                "min_per_value": min_per_value,
                "qualification_requirement": requirement,
            }
            return self._preview(target, list(chosen), policy, k, seed, item_ids, described, gold)
        try:
            batch = services.batch_create(
                item_ids=item_ids,
                subset=described if item_ids is not None else "",
                study=target,
                name=name,
                policy=policy,
                annotators=list(chosen),
                overlap_k=k,
                seed=seed,
                gold_per_annotator=gold_per_annotator,
                gold_rate=gold_rate,
                budget=budget,
                min_per_value=min_per_value,
                qualification_requirement=requirement,
            )
        except PolicyError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            self.style.SUCCESS(
                f"batch {batch.pk} '{batch.name}': {batch.assignments.count()} assignments, seed {batch.seed}"
            )
        )
        if batch.probability_sample is False:
            self.stdout.write(
                f"not a probability sample ({batch.probability_sample_reason}): its labels are "
                "left out of the prediction-powered estimates (docs/annotation.md, "
                '"Batches from a subset")'
            )
        per_value = batch.params.get("per_value")
        if per_value:
            drawn = ", ".join(f"{value} {count}" for value, count in per_value.items())
            self.stdout.write(f"items drawn per attribute value: {drawn}")

    def _requirement(self, study, items, pass_mark, attempts):
        """The qualification round asked for, or None; every problem at once, one per line."""
        if not items and pass_mark is None:
            return None
        if pass_mark is None:
            raise CommandError("qualification: give --qualification-pass-mark in (0, 1], e.g. 0.8")
        requirement = qualification_rules.Requirement(items, pass_mark, attempts)
        problems = qualification_rules.requirement_problems(
            requirement, gold_available=qualification_status.gold_pool(study=study).count()
        )
        if problems:
            raise CommandError("nothing was created:\n" + "\n".join(problems))
        return requirement

    def _preview(self, study, annotators, policy, k, seed, item_ids, described, gold):
        try:
            preview = batch_subset.workload_preview(
                study=study,
                annotators=annotators,
                policy=policy,
                overlap_k=k,
                seed=seed,
                item_ids=item_ids,
                subset=described if item_ids is not None else "",
                **gold,
            )
        except PolicyError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"{preview['items']} items ({described}), {preview['assignments']} assignments, "
            f"seed {preview['seed']} (pass --seed {preview['seed']} to create exactly this); "
            "nothing was created"
        )
        for row in preview["rows"]:
            self.stdout.write(f"{row['annotator']}\t{row['items']} items\t{row['gold']} gold")
        if preview["not_probability_sample"]:
            self.stdout.write(preview["not_probability_sample"])
