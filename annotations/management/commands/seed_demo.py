import datetime as dt
import secrets
import tempfile
from pathlib import Path

import numpy as np
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError
from django.db import transaction
from django.utils import timezone

from annotations import services
from annotations.adjudication import disputes as adjudication
from annotations.imports import importers
from annotations.management import demo
from annotations.management.helpers import SEED, BaseCommand, http_base_url
from annotations.models import Annotator, Assignment, Batch, Item, Study
from annotations.recruitment import consent, enrolment, invites, panels

DEMO_SLUG = "demo"
ANNOTATORS = [
    ("ann-korean", "Korean"),
    ("ann-nigerian", "Nigerian"),
    ("ann-us", "US"),
    ("ann-indian", "Indian"),
]
ADJUDICATOR = "demo-adjudicator"
SIMULATED = [("sim-annotator-1", ""), ("sim-annotator-2", ""), ("sim-annotator-3", "")]


class Command(BaseCommand):
    help = (
        "Create the synthetic demo study, users and batches once (kept on later runs; --reset "
        "rebuilds it), and print the logins."
    )

    def add_arguments(self, parser):
        parser.add_argument("--seed", type=SEED, default=7)
        parser.add_argument(
            "--reset", action="store_true", help="delete the demo study and build it again"
        )
        parser.add_argument(
            "--base-url",
            default="http://127.0.0.1:8000",
            type=http_base_url,
            help="where the demo is served, for the printed invite and panel links",
        )

    def handle(self, *args, seed, reset, base_url, **options):
        try:
            self._seed(seed=seed, reset=reset, base_url=base_url)
        except KeyboardInterrupt:
            raise CommandError(
                "interrupted; the demo is written in one transaction, so it is complete or "
                "absent: run `make demo` again"
            ) from None

    def _seed(self, *, seed, reset, base_url):
        existing = Study.objects.filter(slug=DEMO_SLUG).first()
        if existing is not None and not existing.is_synthetic_demo:
            raise CommandError(
                f"study '{DEMO_SLUG}' exists and is not the synthetic demo; seed_demo leaves it "
                "alone (rename that study's slug, or use another database)"
            )
        if existing is not None and not reset:
            # make demo runs this every time: keep what annotators did, only print fresh logins.
            with transaction.atomic():
                logins = self._users()
                links = recruitment_links(existing, base_url=base_url)
            self.stdout.write(
                self.style.WARNING(
                    f"Demo study '{DEMO_SLUG}' kept as it was (SYNTHETIC data); "
                    "`make demo DEMO_RESET=1` rebuilds it."
                )
            )
        else:
            with transaction.atomic():
                if existing is not None:
                    services.study_delete(study=existing)
                study, logins = self._build(seed)
                recruitment_demo(study, seed=seed)
                links = recruitment_links(study, base_url=base_url)
            self.stdout.write(
                self.style.WARNING(
                    f"Demo study '{DEMO_SLUG}' created: SYNTHETIC data (images marked SYNTHETIC "
                    "DEMO, simulated answers and judges)."
                )
            )
        for username, password, role in logins:
            self.stdout.write(f"  {role:<22} username: {username:<16} password: {password}")
        for label, url in links:
            self.stdout.write(f"  {label:<22} {url}")

    def _build(self, seed):
        with tempfile.TemporaryDirectory() as tmp:
            study = services.study_create(
                name="Demo study (synthetic data)",
                slug=DEMO_SLUG,
                overlap_k=2,
                is_synthetic_demo=True,
                # The demo shows harmful controls to annotators (behind the content warning),
                # so the safety–utility section has human labels too.
                harmful_to_annotators=True,
                description="Images rendered by the app; simulated annotators and judgments. No finding here is real.",
            )
            truth = {d.item_id: d for d in demo.write_demo_manifest(Path(tmp), seed=seed)}
            importers.items_import(study=study, manifest=Path(tmp) / "manifest.jsonl")
        logins = self._users()
        self._gold(study, truth)
        simulated = [Annotator.objects.get(user__username=name) for name, _ in SIMULATED]
        services.batch_create(
            request=services.batch_request_build(
                study=study,
                name="Simulated annotators (pre-filled)",
                policy=Batch.Policy.K_OVERLAP,
                annotators=simulated,
                overlap_k=2,
                seed=seed,
                gold_per_annotator=3,
            )
        )
        self._simulate_answers(study, simulated, truth, seed)
        people = [Annotator.objects.get(user__username=name) for name, _ in ANNOTATORS]
        services.batch_create(
            request=services.batch_request_build(
                study=study,
                name="Culture-matched batch (ACRB protocol)",
                policy=Batch.Policy.EXPERTISE,
                annotators=people,
                overlap_k=1,
                seed=seed,
                gold_per_annotator=2,
            )
        )
        return study, logins

    def _users(self):
        user_model = get_user_model()
        logins = []
        staff_password = secrets.token_urlsafe(9)
        staff, _ = user_model.objects.get_or_create(
            username="demo-staff", defaults={"is_staff": True, "is_superuser": True}
        )
        staff.is_staff = staff.is_superuser = True
        staff.set_password(staff_password)
        staff.save()
        logins.append(("demo-staff", staff_password, "staff"))
        for name, group in ANNOTATORS + SIMULATED:
            user, _ = user_model.objects.get_or_create(username=name)
            password = secrets.token_urlsafe(9)
            user.set_password(password)
            user.save()
            Annotator.objects.update_or_create(
                user=user, defaults={"group": group, "is_active": True}
            )
            if (name, group) in ANNOTATORS:
                logins.append((name, password, f"annotator ({group})"))
        logins.append(self._adjudicator(staff))
        return logins

    def _adjudicator(self, staff):
        """An annotator granted the demo study's adjudication queue (docs/annotation.md#adjudication)."""
        user, _ = get_user_model().objects.get_or_create(username=ADJUDICATOR)
        password = secrets.token_urlsafe(9)
        user.set_password(password)
        user.save()
        annotator, _ = Annotator.objects.update_or_create(user=user, defaults={"is_active": True})
        study = Study.objects.get(slug=DEMO_SLUG)
        adjudication.adjudicator_grant(study=study, annotator=annotator, user=staff)
        return ADJUDICATOR, password, "adjudicator"

    def _gold(self, study, truth):
        for item in Item.objects.filter(
            study=study, item_id__startswith=f"{demo.GOLD_BASE_PROMPT}-"
        ):
            d = truth[item.item_id]
            services.item_set_gold(item=item, hard_refusal=d.truth_refusal, cue=d.truth_cue)

    def _simulate_answers(self, study, annotators, truth, seed):
        rng = np.random.default_rng(seed + 1)
        # A total order: the answers draw from one generator in this order, and `position`
        # alone ties across annotators, which SQLite and PostgreSQL break differently (the same
        # seed made two demos). Position, then annotator is the order SQLite used.
        rows = (
            Assignment.objects.filter(annotator__in=annotators, item__study=study)
            .select_related("item", "batch__study")
            .order_by("position", "annotator_id", "pk")
        )
        # Simulated annotators loaded each item before answering: an answer to an item never
        # served would be flagged too fast (docs/annotation.md); and, like a person, opened a
        # harmful control's image behind its content warning before answering it.
        rows.filter(served_at__isnull=True).update(
            served_at=timezone.now() - dt.timedelta(seconds=20)
        )
        rows.filter(item__intent="harmful", revealed_at__isnull=True).update(
            revealed_at=timezone.now() - dt.timedelta(seconds=15)
        )
        for assignment in rows:
            refusal, cue = demo.simulated_answer(truth[assignment.item.item_id], rng)
            services.annotation_submit(assignment=assignment, hard_refusal=refusal, cue_label=cue)


RECRUITMENT_BATCH = "Recruited annotators (invite and panel links)"


def recruitment_demo(study, *, seed: int) -> None:
    """Consent text, a recruitment batch and one panel link, made once with the demo study."""
    consent.consent_publish(
        study=study,
        consent_text=(
            "SYNTHETIC DEMO. You will label generated images (no real people are studied).\n\n"
            "Taking part is voluntary; you may stop at any time. Your answers are stored with a "
            "pseudonymous id and used only to measure the demo's statistics."
        ),
        instructions="Answer what you see in the image, not what the prompt asked for.",
    )
    batch = enrolment.recruitment_batch_create(
        study=study,
        name=RECRUITMENT_BATCH,
        policy=Batch.Policy.EXPERTISE,
        overlap_k=1,
        items_per_annotator=12,
        gold_per_annotator=2,
        seed=seed,
    )
    panels.panel_link_create(
        batch=batch, name="Demo panel (Prolific-style)", completion_code="DEMO-COMPLETE"
    )


def recruitment_links(study, *, base_url: str) -> list[tuple[str, str]]:
    """A fresh single-use invite link (only its hash is stored, so an old one cannot be shown
    again) and the panel link, to print."""
    batch = Batch.objects.filter(study=study, name=RECRUITMENT_BATCH).first()
    if batch is None:  # a demo study made before recruitment existed
        return []
    [(_, token)] = invites.invite_links_create(batch=batch, group="Nigerian", note="make demo")
    panel = batch.panel_links.order_by("pk").first()
    base = base_url.rstrip("/")
    links = [("invite link", f"{base}/join/{token}/  (single use, group Nigerian, 14 days)")]
    if panel is not None:
        query = "PROLIFIC_PID=demo-participant-1&STUDY_ID=demo&SESSION_ID=s1"
        links.append(("panel link", f"{base}/p/{panel.slug}/?{query}"))
    return links
