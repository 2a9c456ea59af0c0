import secrets
import tempfile
from pathlib import Path

import numpy as np
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from annotations import demo, services
from annotations.models import Annotator, Assignment, Batch, Item, Study
from annotations.recruitment import consent, enrolment, invites, panels

DEMO_SLUG = "demo"
ANNOTATORS = [
    ("ann-korean", "Korean"),
    ("ann-nigerian", "Nigerian"),
    ("ann-us", "US"),
    ("ann-indian", "Indian"),
]
SIMULATED = [("sim-annotator-1", ""), ("sim-annotator-2", ""), ("sim-annotator-3", "")]


class Command(BaseCommand):
    help = "Create (or recreate) the synthetic demo study, users and batches, and print the logins."

    def add_arguments(self, parser):
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument(
            "--base-url",
            default="http://127.0.0.1:8000",
            help="where the demo is served, for the printed invite and panel links",
        )

    def handle(self, *args, seed, base_url="http://127.0.0.1:8000", **options):
        with tempfile.TemporaryDirectory() as tmp, transaction.atomic():
            Study.objects.filter(slug=DEMO_SLUG).delete()
            study = services.study_create(
                name="Demo study (synthetic data)",
                slug=DEMO_SLUG,
                overlap_k=2,
                is_synthetic_demo=True,
                description="Images rendered by the app; simulated annotators and judgments. No finding here is real.",
            )
            truth = {d.item_id: d for d in demo.write_demo_manifest(Path(tmp), seed=seed)}
            services.items_import(study=study, manifest=Path(tmp) / "manifest.jsonl")
            logins = self._users()
            self._gold(study, truth)
            simulated = [Annotator.objects.get(user__username=name) for name, _ in SIMULATED]
            services.batch_create(
                study=study,
                name="Simulated annotators (pre-filled)",
                policy=Batch.Policy.K_OVERLAP,
                annotators=simulated,
                overlap_k=2,
                seed=seed,
                gold_per_annotator=3,
            )
            self._simulate_answers(study, simulated, truth, seed)
            people = [Annotator.objects.get(user__username=name) for name, _ in ANNOTATORS]
            services.batch_create(
                study=study,
                name="Culture-matched batch (ACRB protocol)",
                policy=Batch.Policy.EXPERTISE,
                annotators=people,
                overlap_k=1,
                seed=seed,
                gold_per_annotator=2,
            )
            recruitment_links = recruitment_demo(study, base_url=base_url, seed=seed)
        self.stdout.write(
            self.style.WARNING(
                "Demo study 'demo' created: SYNTHETIC data (rendered images, simulated answers)."
            )
        )
        for username, password, role in logins:
            self.stdout.write(f"  {role:<10} username: {username:<16} password: {password}")
        for label, url in recruitment_links:
            self.stdout.write(f"  {label:<10} {url}")

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
        return logins

    def _gold(self, study, truth):
        for item in Item.objects.filter(study=study, item_id__startswith="bp09-"):
            d = truth[item.item_id]
            services.item_set_gold(item=item, hard_refusal=d.truth_refusal, cue=d.truth_cue)

    def _simulate_answers(self, study, annotators, truth, seed):
        rng = np.random.default_rng(seed + 1)
        rows = Assignment.objects.filter(
            annotator__in=annotators, item__study=study
        ).select_related("item", "batch__study")
        for assignment in rows:
            refusal, cue = demo.simulated_answer(truth[assignment.item.item_id], rng)
            services.annotation_submit(assignment=assignment, hard_refusal=refusal, cue_label=cue)


def recruitment_demo(study, *, base_url: str, seed: int) -> list[tuple[str, str]]:
    """Consent text, a recruitment batch, one invite link and one panel link (printed by make demo)."""
    consent.consent_publish(
        study=study,
        consent_text=(
            "SYNTHETIC DEMO. You will label generated images (coloured shapes, no real people).\n\n"
            "Taking part is voluntary; you may stop at any time. Your answers are stored with a "
            "pseudonymous id and used only to measure the demo's statistics."
        ),
        instructions="Answer what you see in the image, not what the prompt asked for.",
    )
    batch = enrolment.recruitment_batch_create(
        study=study,
        name="Recruited annotators (invite and panel links)",
        policy=Batch.Policy.EXPERTISE,
        overlap_k=1,
        items_per_annotator=12,
        gold_per_annotator=2,
        seed=seed,
    )
    [(_, token)] = invites.invite_links_create(batch=batch, group="Nigerian", note="make demo")
    panel = panels.panel_link_create(
        batch=batch, name="Demo panel (Prolific-style)", completion_code="DEMO-COMPLETE"
    )
    base = base_url.rstrip("/")
    return [
        ("invite", f"{base}/join/{token}/  (single use, group Nigerian, 14 days)"),
        (
            "panel",
            f"{base}/p/{panel.slug}/?PROLIFIC_PID=demo-participant-1&STUDY_ID=demo&SESSION_ID=s1",
        ),
    ]
