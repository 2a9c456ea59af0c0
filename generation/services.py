"""Writes of Stages I and II: set a study up, store its plan, attach generators, create the
generation requests and run them (queued on Celery, or in this process).

Read top to bottom: ``study_setup`` (a study from a config) → ``study_plan_build``
(``study_plan_draft``: load, sample, rephrase, expand, no writes; then ``study_plan_store``) →
``study_generator_attach`` → ``generation_requests_create`` → ``generation.tasks.generation_run`` (Celery)
or ``generation_run_inline``. Each request is made by ``generation_chunk_run``: claim the
rows, take provider slots, call the cached generator, record each result as an Item.
The execution steps live in ``generation/runs/execution.py``, face-only sets in
``generation/faces/services.py``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import numbers
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import IntegrityError, transaction

from annotations import services as annotation_services
from annotations.common import form_keys, jobs
from annotations.common.bounds import MAX_SEED
from annotations.common.jobs import Progress
from annotations.models import BackgroundJob, Study
from generation import backends
from generation.backends.registry import not_configured
from generation.models import (
    GenerationRequest,
    PlannedPrompt,
    PromptRephrasing,
    StudyGenerator,
    StudyPlan,
)
from generation.prompts import Taxonomy, build_prompts, load_base_prompts, load_taxonomy
from generation.prompts.controls import (
    controls_for_plan,
)
from generation.prompts.rephrase import (
    RECORD_COLUMNS,
    RephraseCache,
    RephraseRecord,
    RewriterConfig,
    apply_rephrasings,
    rephrase_with_config,
)
from generation.prompts.taxonomy import DEFAULT_TAXONOMY_PATH
from generation.prompts.taxonomy import NEUTRAL as NEUTRAL_ATTRIBUTE
from generation.runs.execution import (
    claim_holder,
    generation_chunk_run,
    generation_queue,
    requests_reopen,
)
from generation.selectors import generation_status_counts
from generation.study_config import StudyConfig, rephrase_choice

JOB_KIND = "generate_study"


class PlanLocked(ValueError):
    """The new plan would change or drop rows that already have generation requests."""


# --- a study from a config ------------------------------------------------------------------


def study_setup(*, config: StudyConfig) -> Study:
    """Create (or reuse) the study named by ``config``, store its plan and attach its
    generators. Rerunning with the same config changes nothing. The plan is drafted first
    (rephrasing calls the rewriter), so a failure there writes nothing."""
    draft = study_plan_draft(
        taxonomy_path=config.taxonomy,
        base_prompts_path=config.base_prompts,
        sample_size=config.sample_size,
        sample_seed=config.sample_seed,
        attributes=config.attributes,
        missing_slot=config.missing_slot,
        rephrase=config.rephrase,
        rephrase_config=config.rephrase_config,
        harmful_share=config.harmful_share,
        harmful_seed=config.harmful_seed,
    )
    with transaction.atomic():
        study = Study.objects.filter(slug=config.slug).first()
        if study is None:
            study = annotation_services.study_create(
                name=config.name,
                slug=config.slug,
                mode=Study.Mode.T2I,
                description=config.description,
            )
        study_plan_store(study=study, draft=draft)
        for name, generator_config in config.generators.items():
            study_generator_attach(
                study=study, name=name, config=generator_config, seeds=config.seeds
            )
    return study


# --- Stage I: the plan ----------------------------------------------------------------------


def sampled_base_prompts(prompts: list, *, size: int | None, seed: int) -> list:
    """``size`` prompts drawn without replacement by ``seed``, in their file order.

    A size below 1 would plan an empty study, and a negative seed ends in numpy's own words:
    both are one ValueError here, whatever the caller (command, form, ``run_audit``'s YAML)."""
    if size is not None and not (_whole(size) and size >= 1):
        raise ValueError(f"the sample size must be a whole number of at least 1, got {size!r}")
    if not (_whole(seed) and 0 <= seed <= MAX_SEED):
        raise ValueError(
            f"the sample seed must be a whole number from 0 to {MAX_SEED:,}, got {seed!r}"
        )
    if not prompts:
        raise ValueError("the base prompts file holds no prompts")
    if size is None or size >= len(prompts):
        return list(prompts)
    rng = np.random.default_rng(seed)
    return [prompts[i] for i in sorted(rng.choice(len(prompts), size=size, replace=False))]


def _whole(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


@dataclasses.dataclass(frozen=True)
class PlanDraft:
    """A plan ready to store: what ``study_plan_draft`` read, rephrased and expanded."""

    taxonomy_path: Path
    taxonomy: Taxonomy  # restricted to the chosen attributes
    base_prompts_path: Path | None
    rows: list
    options: dict
    rephrasings: list[RephraseRecord]


def study_plan_draft(
    *,
    taxonomy_path: str | Path | None = None,
    base_prompts_path: str | Path | None = None,
    sample_size: int | None = None,
    sample_seed: int = 0,
    attributes: Sequence[str] | None = None,
    missing_slot: str = "skip",
    rephrase: str | None = None,
    rephrase_config: dict | None = None,
    harmful_share: float | None = None,
    harmful_seed: int = 0,
) -> PlanDraft:
    """Load taxonomy and base prompts, draw the sample, rephrase it (when a rewriter is
    named) and expand it into plan rows. Writes nothing to the database, so a rewriter that
    fails (``RephraseError``) leaves no half-made study."""
    taxonomy_path = Path(taxonomy_path or DEFAULT_TAXONOMY_PATH)
    taxonomy = load_taxonomy(taxonomy_path)
    if attributes:
        unknown = sorted(set(attributes) - set(taxonomy.attributes))
        if unknown:
            raise ValueError(
                f"unknown attributes {unknown}; the taxonomy has {taxonomy.attributes}"
            )
        values = tuple(v for v in taxonomy.values if v.attribute in attributes)
        taxonomy = dataclasses.replace(taxonomy, values=values, attributes=tuple(attributes))
    rewriter = rewriter_config_resolve(name=rephrase, config=rephrase_config) if rephrase else None
    base_prompts = load_base_prompts(base_prompts_path)
    chosen = sampled_base_prompts(base_prompts, size=sample_size, seed=sample_seed)
    rephrasings = base_prompts_rephrase(chosen, config=rewriter) if rewriter else []
    expanded = apply_rephrasings(chosen, rephrasings)
    controls = None
    if harmful_share is not None:
        controls = controls_for_plan(
            expanded, share=harmful_share, seed=harmful_seed, missing_slot=missing_slot
        )
        expanded = [*expanded, *controls.prompts]
    rows = build_prompts(taxonomy, expanded, missing_slot=missing_slot)
    options = {
        "sample_size": sample_size,
        "sample_seed": sample_seed,
        "attributes": list(attributes or []),
        "missing_slot": missing_slot,
        "base_prompts_total": len(base_prompts),
        "rephrase": rewriter.as_dict() if rewriter else None,
        "harmful_controls": controls.options if controls else None,
    }
    base_path = Path(base_prompts_path) if base_prompts_path else None
    return PlanDraft(taxonomy_path, taxonomy, base_path, rows, options, rephrasings)


def study_plan_store(*, study: Study, draft: PlanDraft) -> StudyPlan:
    """Store a drafted plan (one transaction): attribute values, plan rows, rephrasings.
    Replanning keeps rows that already have requests; it refuses (PlanLocked) to change or
    drop them."""
    with transaction.atomic():
        value_ids = _attribute_values_create(study, draft.taxonomy)
        _plan_rows_store(study, draft.rows, value_ids)
        _rephrasings_store(study, draft.rephrasings)
        plan, _ = StudyPlan.objects.update_or_create(
            study=study,
            defaults={
                "taxonomy": _json_file(draft.taxonomy_path),
                "taxonomy_source": str(draft.taxonomy_path),
                "base_prompts_source": str(draft.base_prompts_path or "shipped default"),
                "base_prompts_sha256": _sha256_file(draft.base_prompts_path)
                if draft.base_prompts_path
                else "",
                "options": draft.options,
            },
        )
    return plan


def study_plan_create(
    *, slug: str, name: str, draft: PlanDraft, form_key: str = "", user=None
) -> Study:
    """The New plan page's write: the study (created if new) and its plan, in one transaction.

    ``form_key`` (the form's one-time key) makes a resubmit of the same form store nothing a
    second time: it answers with the study the first submit planned. ValueError (one line) when
    another request created a study at this address meanwhile.
    """
    with transaction.atomic():
        try:
            submission, first = form_keys.form_key_claim(
                key=form_key, purpose="study_plan", user=user
            )
        except form_keys.FormKeyMismatch as mismatch:
            raise ValueError(str(mismatch)) from None
        if not first:
            return Study.objects.get(slug=submission.result["slug"])
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            try:
                with transaction.atomic():
                    study = annotation_services.study_create(name=name or slug, slug=slug)
            except IntegrityError:
                raise ValueError(
                    f"a study with the address {slug!r} was created a moment ago by another "
                    "request; open it, or choose another address"
                ) from None
        study_plan_store(study=study, draft=draft)
        form_keys.form_key_done(submission, {"slug": study.slug})
    return study


def study_plan_build(*, study: Study, **draft_options) -> StudyPlan:
    """Expand taxonomy × base prompts into the study's plan rows (skipped rows included),
    creating an AttributeValue with its cue for every value: ``study_plan_draft`` then
    ``study_plan_store``."""
    return study_plan_store(study=study, draft=study_plan_draft(**draft_options))


# --- Stage I: boundary rephrasing -----------------------------------------------------------


def rewriter_config_resolve(*, name: str, config: dict | None = None) -> RewriterConfig:
    """The rewriter ``name`` (``settings.ACRB_REWRITERS`` unless ``config`` is given),
    validated; its dict is stored in the plan's options."""
    if config is None:
        if name not in settings.ACRB_REWRITERS:
            known = sorted(settings.ACRB_REWRITERS) or "none (set ACRB_BACKENDS_FILE)"
            raise ValueError(f"no rewriter named {name!r}; configured: {known}")
        config = settings.ACRB_REWRITERS[name]
    return RewriterConfig.from_dict(config, name=name)


def rephrase_cache() -> RephraseCache:
    """The rewriters' answers, shared by the command, run_audit and the staff page."""
    return RephraseCache(Path(settings.VAR_DIR) / "rephrase_cache.jsonl")


def base_prompts_rephrase(
    prompts: list, *, config: RewriterConfig, cache: RephraseCache | None = None
) -> list[RephraseRecord]:
    """One record per base prompt, kept or rejected with its reason; raises RephraseError
    (one line) at the first rewriter error. Answers so far stay in the cache."""
    return rephrase_with_config(prompts, config, cache=cache or rephrase_cache(), fail_fast=True)


def _rephrasings_store(study: Study, records: list[RephraseRecord]) -> None:
    PromptRephrasing.objects.filter(study=study).delete()
    PromptRephrasing.objects.bulk_create(
        [
            PromptRephrasing(
                study=study,
                position=position,
                **{column: getattr(record, column) for column in RECORD_COLUMNS},
            )
            for position, record in enumerate(records)
        ],
        batch_size=1000,
    )


def _attribute_values_create(study: Study, taxonomy) -> dict[tuple[str, str], int]:
    ids = {}
    neutral = annotation_services.attribute_value_get_or_create(
        study=study,
        attribute=NEUTRAL_ATTRIBUTE,
        value=NEUTRAL_ATTRIBUTE,
        cue_description=taxonomy.neutral_cue,
    )
    ids[(NEUTRAL_ATTRIBUTE, NEUTRAL_ATTRIBUTE)] = neutral.pk
    for value in taxonomy.values:
        row = annotation_services.attribute_value_get_or_create(
            study=study, attribute=value.attribute, value=value.value, cue_description=value.cue
        )
        ids[(value.attribute, value.value)] = row.pk
    return ids


PLAN_FIELDS = (
    "prompt_id",
    "domain",
    "attribute",
    "value",
    "text",
    "neutral_text",
    "base_text",
    "phrase",
    "operation",
    "cue",
    "slot_rule",
    "status",
    "skip_reason",
    "source",
    "intent",
)


def _plan_rows_store(study: Study, rows, value_ids: dict) -> None:
    existing = {row.plan_id: row for row in PlannedPrompt.objects.filter(study=study)}
    locked = set(
        GenerationRequest.objects.filter(study=study).values_list(
            "planned_prompt__plan_id", flat=True
        )
    )
    new_ids = {row.plan_id for row in rows}
    dropped = sorted(plan_id for plan_id in locked if plan_id not in new_ids)
    changed = [
        row.plan_id
        for row in rows
        if row.plan_id in locked and existing[row.plan_id].text != row.text
    ]
    if dropped or changed:
        raise PlanLocked(
            f"{len(dropped)} planned prompts with requests would be dropped and {len(changed)} "
            f"changed (e.g. {(dropped + changed)[:3]}); plan a new study instead"
        )
    creates, updates = [], []
    for position, row in enumerate(rows):
        fields = {name: getattr(row, name) for name in PLAN_FIELDS}
        fields["attribute_value_id"] = (
            value_ids.get((row.attribute, row.value)) if row.status == "planned" else None
        )
        current = existing.get(row.plan_id)
        target = current or PlannedPrompt(study=study, plan_id=row.plan_id)
        for name, value in {**fields, "position": position}.items():
            setattr(target, name, value)
        (updates if current else creates).append(target)
    PlannedPrompt.objects.filter(study=study).exclude(plan_id__in=new_ids).delete()
    PlannedPrompt.objects.bulk_create(creates, batch_size=1000)
    update_fields = [*PLAN_FIELDS, "attribute_value_id", "position"]
    PlannedPrompt.objects.bulk_update(updates, update_fields, batch_size=1000)


def _json_file(path: Path) -> dict:
    import json

    return json.loads(path.read_text(encoding="utf-8"))


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- Stage II: generators and requests ------------------------------------------------------


def generator_config_resolve(*, name: str, config: dict | None = None) -> dict:
    """The config of generator ``name`` (``settings.ACRB_GENERATORS`` unless given),
    validated by ``backends.generator_config``; the dict stored on the study."""
    if config is None:
        if name not in settings.ACRB_GENERATORS:
            raise backends.BackendConfigError(
                not_configured("generator", name, settings.ACRB_GENERATORS)
            )
        config = settings.ACRB_GENERATORS[name]
    resolved = {**config, "name": name}
    backends.generator_config(resolved)
    return resolved


def study_generator_attach(
    *, study: Study, name: str, config: dict | None = None, seeds: Sequence[int] = (0,)
) -> StudyGenerator:
    """Attach a generator by name; reattaching with the same config and seeds is a no-op.
    A generator that already has requests keeps its config (attach the change under a new
    name), but may gain seeds."""
    resolved = generator_config_resolve(name=name, config=config)
    seeds = [int(seed) for seed in seeds]
    if not seeds:
        raise ValueError("a generator needs at least one seed")
    with transaction.atomic():
        current = StudyGenerator.objects.select_for_update().filter(study=study, name=name).first()
        if current is None:
            return StudyGenerator.objects.create(
                study=study, name=name, config=resolved, seeds=seeds
            )
        if current.config != resolved and current.requests.exists():
            raise ValueError(
                f"generator {name!r} already has requests; attach the new config under another name"
            )
        current.config, current.seeds = resolved, sorted(set(current.seeds) | set(seeds))
        current.save(update_fields=["config", "seeds"])
        return current


def generation_requests_create(*, study: Study) -> int:
    """One request per (planned prompt, generator, seed) not yet there; returns how many
    were added. A unique constraint makes concurrent calls safe."""
    planned = list(
        PlannedPrompt.objects.filter(study=study, status=PlannedPrompt.Status.PLANNED).values_list(
            "pk", flat=True
        )
    )
    before = GenerationRequest.objects.filter(study=study).count()
    rows = [
        GenerationRequest(study=study, planned_prompt_id=prompt, generator=generator, seed=seed)
        for generator in StudyGenerator.objects.filter(study=study)
        for prompt in planned
        for seed in generator.seeds
    ]
    GenerationRequest.objects.bulk_create(rows, batch_size=1000, ignore_conflicts=True)
    return GenerationRequest.objects.filter(study=study).count() - before


def default_chunk_size(config: dict) -> int:
    """Local pipelines: one batch per task; APIs: a few requests per concurrency slot."""
    parsed = backends.generator_config(config)
    if backends.GENERATORS.is_local(parsed.kind):
        return max(1, parsed.batch_size)
    return max(1, parsed.max_concurrency * 2)


def open_request_chunks(*, study: Study, chunk_size: int | None = None) -> list[list[int]]:
    """Ids of the study's pending requests, cut into per-generator chunks."""
    return [ids for _queue, ids in queued_request_chunks(study=study, chunk_size=chunk_size)]


def queued_request_chunks(
    *, study: Study, chunk_size: int | None = None
) -> list[tuple[str, list[int]]]:
    """``(queue, ids)`` per chunk of pending requests; the queue follows the generator's kind
    (``execution.generation_queue``)."""
    chunks: list[tuple[str, list[int]]] = []
    for generator in StudyGenerator.objects.filter(study=study):
        ids = list(
            GenerationRequest.objects.filter(
                generator=generator, status=GenerationRequest.Status.PENDING
            ).values_list("pk", flat=True)
        )
        size = chunk_size or default_chunk_size(generator.config)
        queue = generation_queue(generator.config)
        chunks += [(queue, ids[start : start + size]) for start in range(0, len(ids), size)]
    return chunks


# --- Stage II: running ----------------------------------------------------------------------


def generation_job_refresh(*, job_id: int) -> None:
    """Set the job's progress from the study's request statuses; finish it when no request
    is pending or running."""
    job = BackgroundJob.objects.get(pk=job_id)
    if job.status in (BackgroundJob.Status.SUCCEEDED, BackgroundJob.Status.FAILED):
        return
    counts = generation_status_counts(study=job.study)
    if job.status == BackgroundJob.Status.QUEUED:
        jobs.job_start(job_id=job_id, total=counts.total)
    jobs.job_progress(job_id=job_id, done=counts.finished, total=counts.total)
    if counts.open == 0:
        errors = [f"{plan_id}: {error}" for plan_id, error in counts.error_examples]
        jobs.job_finish(job_id=job_id, message=counts.summary(), errors=errors)


@dataclasses.dataclass
class RunSummary:
    done: int = 0
    refused: int = 0
    error: int = 0
    open: int = 0
    created: int = 0

    @property
    def complete(self) -> bool:
        return self.open == 0


def generation_run_inline(
    *,
    study: Study,
    progress: Progress = None,
    chunk_size: int | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> RunSummary:
    """Make every missing image of the study in this process (no worker), retrying error
    results with backoff up to each generator's ``max_retries``; ``progress(finished,
    total)`` after each chunk. Rerunning fills only the gaps."""
    created = generation_requests_create(study=study)
    requests_reopen(study=study)
    holder = claim_holder()
    attempt_round = 0
    while chunks := open_request_chunks(study=study, chunk_size=chunk_size):
        retry_delay = 0.0
        for chunk in chunks:
            outcome = generation_chunk_run(
                request_ids=chunk, attempt_round=attempt_round, holder=holder
            )
            retry_delay = max(retry_delay, outcome.retry_after_s)
            if progress:
                counts = generation_status_counts(study=study)
                progress(counts.finished, counts.total)
        attempt_round += 1
        if retry_delay:
            sleep(retry_delay)
    counts = generation_status_counts(study=study)
    return RunSummary(counts.done, counts.refused, counts.error, counts.open, created)


__all__ = [
    "JOB_KIND",
    "PlanLocked",
    "PlanDraft",
    "RunSummary",
    "StudyConfig",
    "base_prompts_rephrase",
    "default_chunk_size",
    "generation_chunk_run",
    "generation_job_refresh",
    "generation_requests_create",
    "generation_run_inline",
    "generator_config_resolve",
    "open_request_chunks",
    "queued_request_chunks",
    "rephrase_cache",
    "rephrase_choice",
    "rewriter_config_resolve",
    "sampled_base_prompts",
    "study_generator_attach",
    "study_plan_build",
    "study_plan_draft",
    "study_plan_store",
    "study_setup",
]
