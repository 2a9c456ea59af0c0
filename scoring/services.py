"""Writes for scoring: run a judge over a study, queue it as Celery batches, calibrate τ.

The judges themselves are Django-free (``scoring.judges``); this module turns items into
``ItemInput`` records, stores each ``JudgmentOutput`` as an ``AutomatedJudgment`` and keeps
the bookkeeping. How an output becomes a row (see docs/judges.md, "What is stored"):

- hard-refusal label → ``hard_refusal`` True/False, ``score`` = the CLIP refusal similarity
  (None when CLIP did not run), ``confidence`` as the judge gave it;
- cue label → ``hard_refusal`` None (a cue judge does not answer the refusal question),
  ``cue_label``, ``confidence``;
- ``invalid`` (an answer that did not parse) → ``hard_refusal`` None, ``cue_label`` empty,
  ``error`` empty, ``raw_output["label"] == "invalid"``: the judge answered, so it is no
  error, but it gave no verdict, so the agreement statistics (which read rows with a
  non-null ``hard_refusal``) leave it out;
- an error (corrupt image, backend failure) → ``hard_refusal`` None and ``error`` set.

An ensemble's own output and each member's output are stored as separate rows under their
own names and versions. An item whose (top-level) output asks for review gets
``Item.needs_review = True``; scoring never clears the flag (another judge may have set it).
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F, Sum
from django.utils import timezone

from annotations.common import jobs
from annotations.common.bulk import rows_upsert
from annotations.common.jobs import Progress
from annotations.models import (
    Annotation,
    AutomatedJudgment,
    BackgroundJob,
    EquivalenceMargin,
    Item,
    Study,
)
from scoring.judges import ItemInput, Judge, JudgmentOutput, load_judge
from scoring.judges.calibration import choose_threshold
from scoring.judges.records import (
    CUE_LABELS,
    HARD_REFUSAL_LABELS,
    REFUSAL,
    preferred_batch_size,
)
from scoring.judges.registry import runs_a_local_model
from scoring.stats.equivalence import check_delta_margin
from scoring.stats.study_rates import MEASURES
from scoring.storage import local_file_paths

from . import selectors
from .models import JudgeResponse, RefusalThreshold, ScoringBatch

logger = logging.getLogger(__name__)
DEFAULT_CHUNK_SIZE = 256
DEFAULT_BATCH_SIZE = 64


# --- the judge, once per process -----------------------------------------------------------


class DatabaseCacheStore:
    """``scoring.judges.cache.CacheStore`` backed by the ``JudgeResponse`` table.

    ``set_many`` only collects entries (per thread); ``flush`` writes them in one statement,
    inside the transaction that stores the chunk's judgments (one transaction per
    chunk, the cache included: a chunk's judgments and its cache entries are stored together
    or not at all). ``get``/``set`` read and write at once.
    """

    def __init__(self) -> None:
        self._local = threading.local()

    def get(self, key: str) -> dict[str, Any] | None:
        return self.get_many([key]).get(key)

    def set(self, key: str, value: dict[str, Any]) -> None:
        self._upsert({key: value})

    def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        if not keys:
            return {}
        return dict(JudgeResponse.objects.filter(key__in=keys).values_list("key", "response"))

    def set_many(self, entries: dict[str, dict[str, Any]]) -> None:
        self._pending().update(entries)

    def flush(self) -> None:
        """Write what this thread collected (call inside the chunk's transaction)."""
        pending = self._pending()
        entries = dict(pending)
        pending.clear()
        self._upsert(entries)

    def discard(self) -> None:
        self._pending().clear()

    def _pending(self) -> dict[str, dict[str, Any]]:
        if not hasattr(self._local, "pending"):
            self._local.pending = {}
        return self._local.pending

    @staticmethod
    def _upsert(entries: dict[str, dict[str, Any]]) -> None:
        # Upserts: two workers caching the same response cannot collide on the unique key.
        rows_upsert(
            JudgeResponse,
            (
                (key, value.get("judge_name", ""), value.get("judge_version", ""), value)
                for key, value in entries.items()
            ),
            fields=["key", "judge", "judge_version", "response"],
            unique_fields=["key"],
            update_fields=["judge", "judge_version", "response"],
        )


# One store for every judge of the process: study_score flushes it per chunk.
RESPONSE_CACHE = DatabaseCacheStore()
_JUDGES: dict[str, Judge] = {}
# A threads-pool worker must not build the same (possibly 7B-parameter) judge twice.
_JUDGES_LOCK = threading.Lock()


def judge_load(*, config: dict[str, Any], device: str | None = None) -> Judge:
    """The judge for this config and device, built once per worker process."""
    key = json.dumps([config, device], sort_keys=True, default=str)
    with _JUDGES_LOCK:
        if key not in _JUDGES:
            _JUDGES[key] = load_judge(config, device=device, cache=RESPONSE_CACHE)
        return _JUDGES[key]


def judge_cache_clear() -> None:
    _JUDGES.clear()


# --- scoring a study -----------------------------------------------------------------------


@dataclass
class ScoreSummary:
    judge: str
    judge_version: str
    items: int = 0
    errors: int = 0
    invalid: int = 0
    needs_review: int = 0
    cached: int = 0
    labels: Counter = field(default_factory=Counter)

    def add(self, output: JudgmentOutput) -> None:
        self.items += 1
        self.errors += output.error is not None
        self.invalid += output.label == "invalid"
        self.needs_review += output.needs_review
        self.cached += output.cached
        if output.label is not None:
            self.labels[output.label] += 1

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"labels": dict(self.labels)}


def item_input(
    item: Item, image_path: str | None, source_image_path: str | None = None
) -> ItemInput:
    """What the Django-free judges see of an item (the image as a local file path)."""
    code, message = item.provider_refusal_code, item.provider_refusal_message
    signal = None
    if code or message:
        signal = {"refused": bool(code), "code": code or None, "message": message or None}
    returned_text = message or (item.generation_params or {}).get("returned_text")
    return ItemInput(
        item_id=str(item.pk),
        image_path=image_path,
        prompt=item.prompt,
        cue=item.cue or item.attribute_value.cue_description or None,
        generator=item.generator or None,
        provider_signal=signal,
        returned_text=returned_text or None,
        image_sha256=item.image_sha256 or None,
        source_image_path=source_image_path,
    )


def study_score(
    *,
    study: Study,
    judge_name: str,
    device: str | None = None,
    item_ids: list[int] | None = None,
    progress: Progress = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    judge_configs: dict[str, dict] | None = None,
) -> ScoreSummary:
    """Score the study's items (all, or ``item_ids``) with one configured judge, synchronously.

    Items go to the judge a chunk at a time: ``chunk_size``, widened to the judge's own batch
    size so a small chunk never caps the model's batch. Each chunk's judgments, cache entries
    and review flags are stored in one transaction, so an interrupted run keeps what it
    finished and a rerun (cached) is cheap. ``judge_configs`` adds judges to the configured
    ones (see ``selectors.judge_config``).
    """
    config = selectors.judge_config(study=study, judge_name=judge_name, configs=judge_configs)
    judge = judge_load(config=config, device=device)
    items = selectors.items_for_scoring(study=study, item_ids=item_ids)
    summary = ScoreSummary(judge=judge.name, judge_version=judge.version)
    size = max(chunk_size, preferred_batch_size(judge))
    for start in range(0, len(items), size):
        chunk = items[start : start + size]
        RESPONSE_CACHE.discard()  # nothing left over from an earlier, failed chunk
        files = {(item.pk, "image"): item.image for item in chunk}
        files |= {(item.pk, "source"): item.source_image for item in chunk if item.source_image}
        with local_file_paths(files) as paths:
            inputs = [
                item_input(item, paths[item.pk, "image"], paths.get((item.pk, "source")))
                for item in chunk
            ]
            outputs = judge.judge_items(inputs)
        judgments_store(items=chunk, outputs=outputs)
        for output in outputs:
            summary.add(output)
        if progress:
            progress(summary.items, len(items))
    return summary


JUDGMENT_FIELDS = [
    *("item", "judge", "judge_version", "hard_refusal", "score", "cue_label", "confidence"),
    *("raw_output", "error"),
]
JUDGMENT_UPDATE_FIELDS = [
    "hard_refusal", "score", "cue_label", "confidence", "raw_output", "error", "updated_at",
]  # fmt: skip


def judgments_store(*, items: list[Item], outputs: list[JudgmentOutput]) -> None:
    """One row per output and per ensemble member (an upsert: a rerun overwrites, never
    duplicates), the judge's new cache entries, and the review flags: three statements in one
    transaction, whatever the chunk's size."""
    pks = {str(item.pk): item.pk for item in items}
    rows = []
    for output in outputs:
        item_pk = pks[output.item_id]
        for member in (*output.member_outputs, output):
            fields = {"score": None, "cue_label": ""} | judgment_fields(member)
            fields["cue_label"] = fields["cue_label"] or ""
            rows.append((item_pk, *(fields[name] for name in JUDGMENT_FIELDS[1:])))
    flagged = [pks[o.item_id] for o in outputs if o.needs_review]
    with transaction.atomic():
        rows_upsert(
            AutomatedJudgment,
            rows,
            fields=JUDGMENT_FIELDS,
            unique_fields=["item", "judge", "judge_version"],
            update_fields=JUDGMENT_UPDATE_FIELDS,
        )
        RESPONSE_CACHE.flush()
        if flagged:
            Item.objects.filter(pk__in=flagged, needs_review=False).update(needs_review=True)


def judgment_fields(output: JudgmentOutput) -> dict[str, Any]:
    """``AutomatedJudgment`` fields for one output (the mapping in the module docstring)."""
    raw = output.to_dict()
    members = raw.pop("member_outputs")
    if members:
        raw["members"] = [f"{m['judge_name']}@{m['judge_version']}" for m in members]
    fields: dict[str, Any] = {
        "judge": output.judge_name,
        "judge_version": output.judge_version,
        "hard_refusal": None,
        "confidence": output.confidence,
        "raw_output": raw,
        "error": output.error or "",
    }
    if output.error is None and output.label in HARD_REFUSAL_LABELS:
        fields["hard_refusal"] = output.label == REFUSAL
        fields["score"] = clip_refusal_similarity(output)
    elif output.error is None and output.label in CUE_LABELS:
        # A cue judge does not answer the refusal question: hard_refusal stays empty, and the
        # metrics leave this judge out of refusal rates and refusal agreement.
        fields["cue_label"] = output.label
    return fields


def clip_refusal_similarity(output: JudgmentOutput) -> float | None:
    for check in output.evidence.get("checks", []):
        if check.get("check") == "clip":
            return check.get("refusal_similarity")
    return None


# --- scoring as Celery jobs ----------------------------------------------------------------


def scoring_queue(config: dict[str, Any]) -> str:
    """ "gpu" for judges that load a model, ACRB_API_QUEUE for API-backed and rules-only ones."""
    return "gpu" if runs_a_local_model(config) else settings.ACRB_API_QUEUE


def scoring_batch_run(
    *, job_id: int, study_id: int, judge_name: str, item_ids: list[int], device: str | None
) -> None:
    """One task's batch. Idempotent: a finished batch is skipped; a redelivered one is scored
    again (cache hits for what was done) and overwrites, never duplicates, its judgments."""
    batch = next(
        (b for b in ScoringBatch.objects.filter(job_id=job_id) if b.item_ids == list(item_ids)),
        None,
    )
    if batch is None or batch.status != ScoringBatch.Status.QUEUED:
        return
    job = BackgroundJob.objects.get(pk=job_id)
    chunk_size = int(job.params.get("chunk_size", DEFAULT_CHUNK_SIZE))
    ScoringBatch.objects.filter(pk=batch.pk).update(attempts=F("attempts") + 1)
    BackgroundJob.objects.filter(pk=job_id, status=BackgroundJob.Status.QUEUED).update(
        status=BackgroundJob.Status.RUNNING
    )

    def progress(done: int, total: int) -> None:
        ScoringBatch.objects.filter(pk=batch.pk).update(done_items=done)
        scoring_job_refresh(job_id=job_id)

    try:
        summary = study_score(study=Study.objects.get(pk=study_id), judge_name=judge_name,
                              device=device, item_ids=list(item_ids), progress=progress,
                              chunk_size=chunk_size)  # fmt: skip
    except jobs.TRANSIENT_DATABASE_ERRORS:
        raise  # the batch stays queued; its task retries (scoring.tasks)
    except Exception as exc:
        logger.exception("scoring batch %s of job %s failed", batch.index, job_id)
        _batch_finish(
            batch, status=ScoringBatch.Status.FAILED, error=f"{type(exc).__name__}: {exc}"
        )
        scoring_job_refresh(job_id=job_id)
        raise
    _batch_finish(
        batch, status=ScoringBatch.Status.DONE, done_items=summary.items, error_items=summary.errors
    )
    scoring_job_refresh(job_id=job_id)


def _batch_finish(batch: ScoringBatch, **fields) -> None:
    ScoringBatch.objects.filter(pk=batch.pk).update(finished_at=timezone.now(), **fields)


def scoring_job_refresh(*, job_id: int) -> None:
    """Job progress = the sum of its batches' items; finished once no batch is queued."""
    done = ScoringBatch.objects.filter(job_id=job_id).aggregate(n=Sum("done_items"))["n"] or 0
    jobs.job_progress(job_id=job_id, done=done)
    totals = selectors.scoring_job_totals(job_id=job_id)
    if totals["queued"]:
        return
    batches = ScoringBatch.objects.filter(job_id=job_id)
    errors = [
        f"batch {b.index}: {b.error}" for b in batches if b.status == ScoringBatch.Status.FAILED
    ]
    item_errors = sum(b.error_items for b in batches)
    message = f"Scored {done} items; {item_errors} recorded an error."
    jobs.job_finish(job_id=job_id, message=message, errors=errors)


# --- calibration ---------------------------------------------------------------------------


@dataclass
class CalibrationResult:
    judge: str
    judge_version: str
    thresholds: list[RefusalThreshold]
    skipped: dict[str, str]  # generator -> why no τ was chosen


def refusal_threshold_calibrate(
    *, study: Study, judge_name: str, criterion: str = "f1"
) -> CalibrationResult:
    """Choose τ per generator (and pooled, generator '') from human labels vs stored CLIP scores.

    Truth is the majority of an item's non-gold annotations (ties left out); the score is the
    judge's stored CLIP refusal similarity for its configured version. A generator whose labels
    are all one class is skipped with the reason.
    """
    if criterion not in ("f1", "youden"):
        raise ValueError(f"criterion must be 'f1' or 'youden', got {criterion!r}")
    config = selectors.judge_config(study=study, judge_name=judge_name)
    judge, version = config["name"], config["version"]
    truth = selectors.human_refusal_majority(study=study)
    rows = [r for r in selectors.refusal_scores(study=study, judge=judge, judge_version=version)
            if r["item_id"] in truth]  # fmt: skip
    groups: dict[str, list[dict]] = {"": rows}
    for row in rows:
        if row["item__generator"]:
            groups.setdefault(row["item__generator"], []).append(row)
    thresholds, skipped = [], {}
    with transaction.atomic():
        for generator, group in sorted(groups.items()):
            labels = [int(truth[r["item_id"]]) for r in group]
            try:
                choice = choose_threshold([r["score"] for r in group], labels, criterion=criterion)
            except ValueError as exc:
                skipped[generator] = str(exc) if group else "no labelled items with a CLIP score"
                continue
            thresholds.append(RefusalThreshold.objects.create(
                study=study, judge=judge, judge_version=version, generator=generator,
                tau=choice.tau, criterion=criterion, precision=choice.precision,
                recall=choice.recall, f1=choice.f1, youden_j=choice.youden_j, auc=choice.auc,
                n=len(group), n_positive=choice.n_positive, roc_points=choice.roc,
            ))  # fmt: skip
    return CalibrationResult(judge, version, thresholds, skipped)


def equivalence_margin_set(
    *, study: Study, outcome: str, delta_margin, user=None
) -> EquivalenceMargin | None:
    """Set δ for one outcome of a study (docs/metrics.md, "Equivalence within δ"): a new row of
    its history, recording who and when, and whether human labels already existed (the report
    then says δ was set after data were seen). The current δ again changes nothing (None).
    ValidationError names an unknown outcome or a δ outside (0, 1)."""
    if outcome not in MEASURES:
        raise ValidationError(f"unknown outcome {outcome!r}; use one of {', '.join(MEASURES)}")
    try:
        margin = check_delta_margin(delta_margin)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None
    with transaction.atomic():
        # One writer per study at a time: two staff setting δ at once both land in the history.
        Study.objects.select_for_update().filter(pk=study.pk).first()
        current = (
            EquivalenceMargin.objects.filter(study=study, outcome=outcome)
            .order_by("-set_at", "-id")
            .first()
        )
        if current is not None and current.delta_margin == margin:
            return None
        return EquivalenceMargin.objects.create(
            study=study,
            outcome=outcome,
            delta_margin=margin,
            set_by=user if getattr(user, "pk", None) else None,
            set_at=timezone.now(),
            labels_existed=Annotation.objects.filter(assignment__item__study=study).exists(),
        )
