from django.core.management.base import CommandError

from annotations import selectors, services
from annotations.batches.request import NUMBER_OPTIONS, NumberOption
from annotations.management.helpers import BaseCommand, Bounded, study_or_error
from annotations.models import Annotator, Batch
from annotations.policies import PolicyError
from annotations.staff import batch_subset

# The study's pool, and every account of the installation (docs/annotation.md, "Who a batch
# takes").
POOL, INSTALLATION = "all", "installation"


def _bounded(option: NumberOption) -> Bounded:
    """argparse's type for a batch option: its kind and the request check's bounds (so the form,
    the command and the job agree), refused in one line naming the flag."""
    if option.minimum is None or option.maximum is None:
        # The pass mark: its (0, 1] is the qualification rule's (qualification.rules).
        return Bounded(option.kind, 0, 1, low_open=True)
    return Bounded(option.kind, option.minimum, option.maximum)


class Command(BaseCommand):
    help = (
        "Create an annotation batch with a policy (k_overlap, expertise or validate-judge) for "
        "the named annotators, the study's pool (--annotators all) or every account "
        "(--annotators installation)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True)
        parser.add_argument("--name", required=True, help="unique within the study")
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
            "--annotators",
            required=True,
            help=(
                "comma-separated usernames; 'all': the study's pool, the active annotators "
                "who already take part in it (an assignment in one of its batches, a consent, a "
                "redeemed invite or a panel enrolment); 'installation': every active annotator "
                "account. Both leave out staff accounts, and 'installation' the synthetic "
                "demo's accounts, unless --include-staff / --include-demo."
            ),
        )
        parser.add_argument(
            "--include-staff",
            action="store_true",
            help="with --annotators all or installation: staff accounts too",
        )
        parser.add_argument(
            "--include-demo",
            action="store_true",
            help="with --annotators installation: the synthetic demo's accounts too (its "
            "simulated annotators)",
        )
        # Every number option, with its bounds, from its one definition (BatchRequest).
        for option in NUMBER_OPTIONS:
            bounds = f" [{_bounded(option).range}]"
            parser.add_argument(
                option.flag,
                dest=option.name,
                type=_bounded(option),
                metavar="N" if option.kind is int else "X",
                help=option.help + bounds,
            )
        # Batches from a subset (docs/annotation.md): the new-batch page's filter and preview.
        batch_subset.add_subset_arguments(parser)
        parser.add_argument(
            "--preview", action="store_true", help="print each annotator's workload; create nothing"
        )

    def handle(
        self, *args, study, name, policy, annotators, include_staff, include_demo, **options
    ):
        target = study_or_error(study)
        chosen = self._annotators(target, annotators, include_staff, include_demo)
        try:
            item_ids, described = batch_subset.subset_from_options(target, options)
        except ValueError as exc:
            raise CommandError(f"nothing was created: {exc}") from None
        try:
            request = services.batch_request_build(
                study=target,
                annotators=chosen,
                name=name,
                policy=policy,
                item_ids=item_ids,
                subset=described if item_ids is not None else "",
                **{option.name: options[option.name] for option in NUMBER_OPTIONS},
            )
            if options["preview"]:
                return self._preview(request, described)
            batch = services.batch_create(request=request)
        except PolicyError as exc:  # BatchRequestInvalid: every problem, one line each
            lines = str(exc).splitlines()
            shown = f" {lines[0]}" if len(lines) == 1 else "\n" + "\n".join(lines)
            raise CommandError(f"nothing was created:{shown}") from None
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

    def _annotators(self, study, annotators, include_staff, include_demo) -> list[Annotator]:
        if annotators == POOL:
            chosen = list(selectors.annotator_pool(study=study, include_staff=include_staff))
            if not chosen:
                raise CommandError(
                    f"--annotators all: study {study.slug!r} has no annotators yet (none has an "
                    "assignment, a consent, an invite or a panel enrolment in it); name them "
                    "(--annotators ana,bola) or take every account (--annotators installation)"
                )
            return chosen
        if annotators == INSTALLATION:
            return list(
                selectors.annotator_installation(
                    include_staff=include_staff, include_demo=include_demo
                )
            )
        names = [n.strip() for n in annotators.split(",") if n.strip()]
        chosen = list(Annotator.objects.filter(is_active=True, user__username__in=names))
        missing = set(names) - {a.user.username for a in chosen}
        if missing:
            raise CommandError(f"unknown annotators: {', '.join(sorted(missing))}")
        return chosen

    def _preview(self, request, described):
        preview = batch_subset.workload_preview(request=request)
        self.stdout.write(
            f"{preview['items']} items ({described}), {preview['assignments']} assignments, "
            f"seed {preview['seed']} (pass --seed {preview['seed']} to create exactly this); "
            "nothing was created"
        )
        for row in preview["rows"]:
            self.stdout.write(f"{row['annotator']}\t{row['items']} items\t{row['gold']} gold")
        if preview["not_probability_sample"]:
            self.stdout.write(preview["not_probability_sample"])
