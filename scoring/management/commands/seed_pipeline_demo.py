"""A study built end to end by the tiny local pipeline: taxonomy → prompts → generation →
items → a batch. The pipeline has random weights: its images are noise, and it says so."""

from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError
from django.db import transaction
from tqdm import tqdm

from annotations import services as annotation_services
from annotations.management.helpers import SEED, BaseCommand, bounded_float, bounded_int
from annotations.models import Annotator, Batch, Study
from generation import services
from generation.prompts.controls import DEFAULT_HARMFUL_SHARE
from scoring.services import study_score

DEMO_SLUG = "pipeline-demo"


class Command(BaseCommand):
    help = (
        "Build a small study with a tiny random-weight text-to-image pipeline (images are noise)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--slug", default=DEMO_SLUG)
        parser.add_argument(
            "--prompts", type=bounded_int(1, 1_000), default=3, help="base prompts drawn"
        )
        parser.add_argument("--attributes", nargs="*", default=["culture"])
        parser.add_argument(
            "--folder", type=Path, help="pipeline folder (default: VAR_DIR/tiny_t2i)"
        )
        parser.add_argument("--seed", type=SEED, default=0)
        parser.add_argument(
            "--harmful-share",
            type=bounded_float(0, 1),
            default=DEFAULT_HARMFUL_SHARE,
            help="harmful controls per domain's base prompts (docs/generation.md); 0: none",
        )

    def handle(self, *args, slug, prompts, attributes, folder, seed, harmful_share, **options):
        try:
            from generation.backends.tiny import build_tiny_text2image
        except ImportError as error:  # pragma: no cover - the ml extra is missing
            raise CommandError(
                "the pipeline demo needs the ml extra: pip install -e '.[ml]'"
            ) from error
        folder = folder or Path(settings.VAR_DIR) / "tiny_t2i"
        if not (folder / "model_index.json").exists():
            self.stdout.write(f"Building a tiny random-weight pipeline in {folder} …")
            with _quiet_model_libraries():
                build_tiny_text2image(folder)
        with transaction.atomic():
            for existing in Study.objects.filter(slug=slug):
                annotation_services.study_delete(study=existing)
            study = annotation_services.study_create(
                name="Pipeline demo (tiny random-weight generator: images are noise)",
                slug=slug,
                is_synthetic_demo=True,
                min_seconds_per_item=0.0,
                description="Every stage ran for real, but the generator has random weights: no finding here is real.",
            )
            try:
                services.study_plan_build(
                    study=study,
                    sample_size=prompts,
                    sample_seed=seed,
                    attributes=attributes,
                    harmful_share=harmful_share or None,
                    harmful_seed=seed,
                )
            except ValueError as error:
                raise CommandError(str(error)) from None
            services.study_generator_attach(
                study=study, name="tiny-t2i", config=tiny_config(folder), seeds=[seed]
            )
        with tqdm(desc="generating", unit="img", disable=None) as bar, _quiet_model_libraries():

            def progress(done, total):
                bar.total, bar.n = total, done
                bar.refresh()

            summary = services.generation_run_inline(study=study, progress=progress)
        scored = self._judge(study)
        batch = self._batch(study, seed)
        self.stdout.write(
            f"Study {slug}: {summary.done} images, {summary.refused} refused, {summary.error} errors; "
            f"{scored.items} judged by '{scored.judge}' ({scored.labels.get('refusal', 0)} refusals); "
            f"batch '{batch.name}' with {batch.assignments.count()} assignments."
        )
        self.stdout.write(
            self.style.WARNING(
                "The images are NOISE: the pipeline has random weights. This demo shows the stages run; "
                "configure a real model in ACRB_GENERATORS for an audit."
            )
        )

    def _judge(self, study):
        """Stage III with the rules of the hard-refusal judge (no model weights needed)."""
        return study_score(
            study=study, judge_name="demo-rules", judge_configs={"demo-rules": DEMO_JUDGE}
        )

    def _batch(self, study, seed) -> Batch:
        annotators = list(Annotator.objects.filter(is_active=True)[:2])
        if not annotators:
            annotators = [
                annotation_services.annotator_create(username=f"{study.slug}-annotator-{i}")
                for i in (1, 2)
            ]
        return annotation_services.batch_create(
            request=annotation_services.batch_request_build(
                study=study,
                name="Pipeline demo batch",
                policy=Batch.Policy.K_OVERLAP,
                annotators=annotators,
                overlap_k=min(2, len(annotators)),
                seed=seed,
            )
        )


@contextmanager
def _quiet_model_libraries():
    """The tiny pipeline's tokenizer holds 32 tokens, so diffusers warns "truncated because CLIP
    can only handle sequences up to 32 tokens: [... <|endoftext|>]" for every prompt, and the
    libraries draw their own loading bars: a flood in the demo's terminal that says nothing
    about the demo. Errors still show. Through the libraries' own logging modules, which
    configure their loggers on first use (a plain ``logging`` level set earlier is reset)."""
    from diffusers.utils import logging as diffusers_logging
    from transformers.utils import logging as transformers_logging

    modules = (diffusers_logging, transformers_logging)
    levels = [module.get_verbosity() for module in modules]
    bars = [module.is_progress_bar_enabled() for module in modules]
    for module in modules:
        module.set_verbosity_error()
        module.disable_progress_bar()
    try:
        yield
    finally:
        for module, level, bar in zip(modules, levels, bars, strict=True):
            module.set_verbosity(level)
            if bar:
                module.enable_progress_bar()


DEMO_JUDGE = {"kind": "hard_refusal", "name": "demo-rules", "version": "1", "clip": None}


def tiny_config(folder: Path) -> dict:
    return {
        "kind": "diffusers-t2i",
        "model": str(folder),
        "device": "cpu",
        "steps": 2,
        "width": 32,
        "height": 32,
        "guidance": 5.0,
        "batch_size": 8,
        "safety_checker": False,
    }
