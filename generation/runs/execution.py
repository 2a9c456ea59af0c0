"""Executing generation requests: claim rows, lease provider slots, call the cached
generator, record each result as an annotations Item.

Crash safety: a claim names its holder (``host:pid:token``) and time. A claim whose holder
process is gone (same host) or whose lease ran out is stale and may be taken again, so a
chunk left half-done by a killed worker is finished by the next run, and a result is
recorded at most once (the request row is locked, and Item ids are unique per study).
Images are stored content-addressed (``studies/<slug>/generated/<sha256>.<ext>``), so a
rerun never writes a file twice and identical images are visible as shared hashes.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotations.common.image_files import ImageRefused
from annotations.common.media import image_store
from annotations.models import Item
from generation import backends
from generation.models import GenerationRequest, ProviderSlot, StudyGenerator

Status = GenerationRequest.Status
LOCAL_KINDS = backends.GENERATORS.local_names


def claim_lease() -> timedelta:
    return timedelta(seconds=getattr(settings, "ACRB_GENERATION_LEASE_S", 3600))


def generation_queue(config: dict) -> str:
    """The Celery queue of a generator's tasks: "gpu" for local pipelines, ACRB_API_QUEUE
    for HTTP image APIs (CPU worker machines, docs/deployment.md)."""
    kind = config.get("kind", "")
    return "gpu" if kind in LOCAL_KINDS else settings.ACRB_API_QUEUE


# --- holders and claims -------------------------------------------------------------------


def claim_holder() -> str:
    """A token naming this process: ``host:pid:random``."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def holder_is_dead(holder: str) -> bool:
    """True when the holder ran on this host and its process is gone (or a zombie)."""
    host, _, rest = holder.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rpartition(")")[2].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True
    except OSError:
        return False


def claim_is_stale(row: GenerationRequest, now) -> bool:
    if row.claimed_at is None or row.claimed_at < now - claim_lease():
        return True
    return holder_is_dead(row.claimed_by)


def requests_reopen(*, study) -> int:
    """Errors and stale claims go back to pending (a rerun gives them new attempts)."""
    now = timezone.now()
    with transaction.atomic():
        reopened = GenerationRequest.objects.filter(study=study, status=Status.ERROR).update(
            status=Status.PENDING, finished_at=None
        )
        running = GenerationRequest.objects.filter(study=study, status=Status.RUNNING)
        stale = [row.pk for row in running if claim_is_stale(row, now)]
        reopened += GenerationRequest.objects.filter(pk__in=stale).update(
            status=Status.PENDING, claimed_by=""
        )
    return reopened


def requests_claim(*, request_ids: list[int], holder: str) -> list[GenerationRequest]:
    """Take the pending (or stale running) rows among ``request_ids`` for ``holder``; rows
    ``holder`` already claims are taken again (a task retried after a database error)."""
    now = timezone.now()
    with transaction.atomic():
        rows = GenerationRequest.objects.select_for_update().filter(
            pk__in=request_ids, status__in=[Status.PENDING, Status.RUNNING]
        )
        claimed = [
            r.pk
            for r in rows
            if r.status == Status.PENDING or r.claimed_by == holder or claim_is_stale(r, now)
        ]
        for row_id in claimed:
            GenerationRequest.objects.filter(pk=row_id).update(
                status=Status.RUNNING,
                claimed_by=holder,
                claimed_at=now,
                attempts=F("attempts") + 1,
            )
    return list(
        GenerationRequest.objects.filter(pk__in=claimed)
        .select_related("planned_prompt", "generator", "study")
        .order_by("pk")
    )


# --- provider slots (a semaphore across processes) ------------------------------------------


def provider_slots_acquire(
    *, provider: str, capacity: int, holder: str, wanted: int | None = None
) -> list[int]:
    """Lease free slots of the provider's ``capacity`` (maybe none), at most ``wanted``: a
    chunk of 4 requests holds 4 slots, so the other workers can use the rest. Slots
    ``holder`` still has (a retried task) count as acquired."""
    now = timezone.now()
    held = list(ProviderSlot.objects.filter(provider=provider))
    expired = [slot.pk for slot in held if slot.expires_at < now or holder_is_dead(slot.holder)]
    ProviderSlot.objects.filter(pk__in=expired).delete()
    wanted = max(1, capacity if wanted is None else min(wanted, capacity))
    live = [s for s in held if s.pk not in expired]
    acquired = sorted(s.slot for s in live if s.holder == holder)
    # Only slots free a moment ago are tried: with many workers, inserting into every taken
    # slot and catching the IntegrityError cost a round trip each, per chunk.
    taken = {s.slot for s in live}
    for slot in range(max(1, capacity)):
        if len(acquired) >= wanted:
            break
        if slot in taken:
            continue
        try:
            with transaction.atomic():
                ProviderSlot.objects.create(
                    provider=provider, slot=slot, holder=holder, expires_at=now + claim_lease()
                )
        except IntegrityError:
            continue
        acquired.append(slot)
    return sorted(acquired)


def provider_slots_release(*, provider: str, holder: str) -> None:
    ProviderSlot.objects.filter(provider=provider, holder=holder).delete()


# --- the generator, cached per process ------------------------------------------------------

_generators: OrderedDict[str, backends.Generator] = OrderedDict()
_generators_lock = threading.Lock()


def generator_for(config: dict) -> backends.Generator:
    """The loaded generator for ``config``, kept between tasks of this worker process;
    the least recently used is closed when more than ACRB_GENERATORS_CACHED are loaded."""
    key = json.dumps(config, sort_keys=True)
    with _generators_lock:
        if key in _generators:
            _generators.move_to_end(key)
            return _generators[key]
        generator = backends.load_generator(dict(config))
        _generators[key] = generator
        while len(_generators) > getattr(settings, "ACRB_GENERATORS_CACHED", 2):
            _generators.popitem(last=False)[1].close()
        return generator


def generator_cache_clear() -> None:
    with _generators_lock:
        while _generators:
            _generators.popitem()[1].close()


# --- one chunk ------------------------------------------------------------------------------


@dataclass
class ChunkOutcome:
    finished: int = 0
    retry_ids: list[int] = field(default_factory=list)
    retry_after_s: float = 0.0
    busy_ids: list[int] = field(default_factory=list)  # no provider slot was free


def generation_chunk_run(
    *, request_ids: list[int], attempt_round: int = 0, holder: str | None = None
) -> ChunkOutcome:
    """Make the images of ``request_ids`` (idempotent: finished or live-claimed rows are
    skipped). Error results go back to pending while ``attempt_round`` is below the
    generator's ``max_retries`` (``retry_ids``, to run after ``retry_after_s``)."""
    holder = holder or claim_holder()
    outcome = ChunkOutcome()
    by_generator: dict[int, list[int]] = {}
    for row_id, generator_id in GenerationRequest.objects.filter(pk__in=request_ids).values_list(
        "pk", "generator_id"
    ):
        by_generator.setdefault(generator_id, []).append(row_id)
    for generator in StudyGenerator.objects.filter(pk__in=by_generator):
        _run_for_generator(generator, by_generator[generator.pk], attempt_round, holder, outcome)
    return outcome


def _run_for_generator(generator, request_ids, attempt_round, holder, outcome) -> None:
    config = backends.generator_config(generator.config)
    is_api = config.kind not in LOCAL_KINDS
    provider = f"generator:{generator.name}"
    slots: list[int] = []
    if is_api:
        slots = provider_slots_acquire(
            provider=provider,
            capacity=config.max_concurrency,
            holder=holder,
            wanted=len(request_ids),
        )
        if not slots:
            outcome.busy_ids += request_ids
            return
    try:
        rows = requests_claim(request_ids=request_ids, holder=holder)
        batch_size = len(slots) if is_api else max(1, len(rows))
        final = attempt_round >= config.max_retries
        for start in range(0, len(rows), batch_size):
            batch = rows[start : start + batch_size]
            for row, result in zip(batch, _generate(generator, config, batch), strict=True):
                status = generation_result_record(request_id=row.pk, result=result, final=final)
                if status == Status.PENDING:
                    outcome.retry_ids.append(row.pk)
                else:
                    outcome.finished += 1
        if outcome.retry_ids:
            delay = config.backoff_s * 2**attempt_round
            outcome.retry_after_s = max(outcome.retry_after_s, delay)
    finally:
        if is_api:
            provider_slots_release(provider=provider, holder=holder)


def _generate(generator, config, rows) -> list[backends.GenerationResult]:
    requests = [
        backends.GenerationRequest(
            request_id=str(row.pk), prompt=row.planned_prompt.text, seed=row.seed
        )
        for row in rows
    ]
    try:
        return generator_for(generator.config).generate(requests)
    except Exception as error:  # noqa: BLE001 - a generator that fails to load or run is an error result
        message = f"{type(error).__name__}: {error}"[:500]
        return [
            backends.GenerationResult(
                request_id=request.request_id,
                status=backends.ERROR,
                generator=config.name,
                model=config.model,
                prompt=request.prompt,
                seed=request.seed,
                error=message,
            )
            for request in requests
        ]


# --- recording a result ---------------------------------------------------------------------


def generation_result_record(
    *, request_id: int, result: backends.GenerationResult, final: bool
) -> str:
    """Record one result; returns the request's new status. ok/refused make an Item (a
    refusal has no image and carries the provider's code and message); an error leaves the
    request pending for a retry, or ``error`` when ``final``."""
    row = GenerationRequest.objects.select_related("study").get(pk=request_id)
    image_name = ""
    if result.status == backends.OK:
        try:
            image_name = _image_store(row.study.slug, result)
        except ImageRefused as exc:
            result = replace(result, status=backends.ERROR, error=f"generator output: {exc}")
    with transaction.atomic():
        row = (
            GenerationRequest.objects.select_for_update(of=("self",))
            .select_related("study", "planned_prompt__attribute_value", "generator")
            .get(pk=request_id)
        )
        if row.status in (Status.DONE, Status.REFUSED):
            return row.status
        row.claimed_by = ""
        if result.status == backends.ERROR:
            row.status = Status.ERROR if final else Status.PENDING
            row.error = result.error[:2000] or "error"
            row.finished_at = timezone.now() if final else None
            row.save(update_fields=["status", "error", "finished_at", "claimed_by"])
            return row.status
        row.item = _item_get_or_create(row, result, image_name)
        row.status = Status.DONE if result.status == backends.OK else Status.REFUSED
        row.error, row.finished_at, row.latency_s = "", timezone.now(), result.latency_s
        row.params = _params(row, result)
        row.save()
        return row.status


def _image_store(study_slug: str, result: backends.GenerationResult) -> str:
    """Content-addressed, named from the format the bytes' header names (never the backend's
    declared MIME type); bytes of no stored image format are refused (annotations.common.media)."""
    return image_store(data=result.image, folder=f"studies/{study_slug}/generated", reuse=True)


def _params(row: GenerationRequest, result: backends.GenerationResult) -> dict:
    record = result.to_record()
    record.pop("prompt", None)
    return {
        **record,
        "kind": row.generator.config.get("kind", ""),
        "plan_id": row.planned_prompt.plan_id,
    }


def _item_get_or_create(row: GenerationRequest, result, image_name: str) -> Item:
    planned = row.planned_prompt
    item, _ = Item.objects.get_or_create(
        study=row.study,
        item_id=row.item_key,
        defaults={
            "image": image_name,
            "image_sha256": result.content_sha256 if image_name else "",
            "mode": row.study.mode,
            "generator": row.generator.name,
            "prompt": planned.text,
            "base_prompt_id": planned.prompt_id,
            "domain": planned.domain,
            "intent": planned.intent,
            "attribute_value_id": planned.attribute_value_id,
            "cue": planned.cue or planned.attribute_value.cue_description,
            "provider_refusal_code": result.refusal_reason if result.refused else "",
            "provider_refusal_message": result.refusal_message if result.refused else "",
            "generation_params": _params(row, result),
        },
    )
    return item
