from django.core.management.base import BaseCommand, CommandError

from annotations import services
from annotations.management.helpers import study_or_error
from annotations.models import Annotator, Batch
from annotations.policies import PolicyError


class Command(BaseCommand):
    help = "Create an annotation batch with a policy (k_overlap or expertise) for the named annotators."

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True)
        parser.add_argument("--name", required=True)
        parser.add_argument(
            "--policy",
            # Plain strings: argparse prints choices with repr(), which for the enum members
            # read "Batch.Policy.K_OVERLAP".
            choices=[str(Batch.Policy.K_OVERLAP.value), str(Batch.Policy.EXPERTISE.value)],
            default=str(Batch.Policy.K_OVERLAP.value),
            help="k_overlap: every item to k annotators, even workloads; expertise: items whose "
            "attribute value equals an annotator group go to k annotators of that group",
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
        **options,
    ):
        target = study_or_error(study)
        chosen = Annotator.objects.filter(is_active=True)
        if annotators != "all":
            names = [n.strip() for n in annotators.split(",") if n.strip()]
            chosen = chosen.filter(user__username__in=names)
            missing = set(names) - set(chosen.values_list("user__username", flat=True))
            if missing:
                raise CommandError(f"unknown annotators: {', '.join(sorted(missing))}")
        try:
            batch = services.batch_create(
                study=target,
                name=name,
                policy=policy,
                annotators=list(chosen),
                overlap_k=k,
                seed=seed,
                gold_per_annotator=gold_per_annotator,
                gold_rate=gold_rate,
            )
        except PolicyError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            self.style.SUCCESS(
                f"batch {batch.pk} '{batch.name}': {batch.assignments.count()} assignments, seed {batch.seed}"
            )
        )
