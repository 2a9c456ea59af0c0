"""Slow study documents made in the background, so that no page waits for them (docs/report.md,
"Fresh figures and slow files").

- **The study page's documents** (the metrics document and the audit report at the page's
  settings): a page serves the one computed for today's data; if the data changed since, it
  serves the last one with its age and queues one computation for the new state of the data;
  if nothing was ever computed, it says so and polls.
- **Files** (the report's PDF, the REFLECT report as HTML or PDF): a request for a file that
  is not made yet queues its making once and gets a page that polls; the file is served as soon
  as it is in the cache.

The study page's documents are claimed once per study while computed, a file once per state of
the data (``cache.add``), so concurrent requests queue the work once and a study that keeps
changing builds no backlog. The tasks run on the "default" queue (CPU work). If no worker takes
the work within ``INLINE_AFTER_S`` (a development server without a worker), the next request
does it itself: slow, but never stuck.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from celery import shared_task
from django.core.cache import cache
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnavailable

from annotations import selectors as annotation_selectors
from annotations.models import Study
from generation.models import FaceSet
from scoring.metrics.document import (
    Served,
    metrics_document_cached,
    metrics_settings,
    served_for_study_data,
    study_data_cache_keys,
)
from scoring.report.documents import (
    audit_file_cache_key,
    audit_file_cached,
    report_document_cached,
    report_pdf_cached,
    report_settings,
)
from scoring.report.pdf import PdfRendererMissing

logger = logging.getLogger(__name__)

# A claim outlives any computation; after it a request may queue the work again.
CLAIM_S = 900
# Queued work no worker has started after this long is done by the next request itself.
INLINE_AFTER_S = 90


@dataclass(frozen=True)
class PageDocuments:
    """The study page's metrics document and audit report as a page can serve them now."""

    metrics: dict | None
    report: dict | None
    computed_at: datetime | None
    current: bool
    computing_since: datetime | None

    @property
    def ready(self) -> bool:
        return self.metrics is not None and self.report is not None


@dataclass(frozen=True)
class FileState:
    """A slow file: its bytes once made, else the error that stopped it, else since when it is
    being made."""

    data: bytes | None = None
    error: str | None = None
    making_since: datetime | None = None


def _claimed(claim_key: str) -> tuple[bool, datetime | None]:
    """(True, now) when this call claimed the work; (False, when it was claimed) otherwise."""
    now = timezone.now()
    if cache.add(claim_key, now, timeout=CLAIM_S):
        return True, now
    return False, cache.get(claim_key)


def _overdue(since: datetime | None) -> bool:
    return since is not None and (timezone.now() - since).total_seconds() > INLINE_AFTER_S


def _queue(task, args: tuple, *, inline: Callable[[], None]) -> None:
    try:
        task.apply_async(args, queue="default")
    except BrokerUnavailable:  # no broker to queue on: the request does the work itself
        logger.warning("no broker for %s; computing in the request", task.name)
        inline()


# --- the study page's documents ---------------------------------------------------------------


def _page_documents_served(study: Study, fingerprint: str) -> tuple[Served, Served]:
    metrics = served_for_study_data(
        "metrics", study=study, settings=metrics_settings(), fingerprint=fingerprint
    )
    report = served_for_study_data(
        "report", study=study, settings=report_settings(study=study), fingerprint=fingerprint
    )
    return metrics, report


def _page_documents_claim(study: Study) -> str:
    """One computation in flight per study (and audit context): while answers keep coming, the
    pages queue no backlog of recomputations; the next request after it ends claims again."""
    # The report's settings hold the staff-stated audit context: an edit is a new claim too.
    _, latest_report_key = study_data_cache_keys("report", study, "", report_settings(study=study))
    return f"page-documents:{latest_report_key}"


def page_documents_compute(*, study: Study, fingerprint: str | None = None) -> None:
    """Compute (or find in the cache) the page's two documents for today's data, then release
    the study's claim."""
    try:
        fingerprint = fingerprint or annotation_selectors.study_data_fingerprint(study=study)
        metrics_document_cached(study=study, fingerprint=fingerprint)
        report_document_cached(study=study, fingerprint=fingerprint)
    finally:
        cache.delete(_page_documents_claim(study))


@shared_task(acks_late=True)
def page_documents_task(study_id: int) -> None:
    """Idempotent: the documents are cached per state of the data; a second run finds them."""
    study = Study.objects.filter(pk=study_id).first()
    if study is not None:
        page_documents_compute(study=study)


def page_documents(*, study: Study) -> PageDocuments:
    """The page's documents for today's data, else the last ones computed while the current ones
    are computed in the background (queued once), else nothing yet."""
    fingerprint = annotation_selectors.study_data_fingerprint(study=study)
    metrics, report = _page_documents_served(study, fingerprint)
    since = None
    if not (metrics.current and report.current):
        claimed, since = _claimed(_page_documents_claim(study))
        if claimed:
            _queue(
                page_documents_task,
                (study.pk,),
                inline=lambda: page_documents_compute(study=study, fingerprint=fingerprint),
            )
        elif _overdue(since):
            page_documents_compute(study=study, fingerprint=fingerprint)
        metrics, report = _page_documents_served(study, fingerprint)  # an eager worker is done
    current = metrics.current and report.current
    dates = [served.computed_at for served in (metrics, report) if served.computed_at]
    return PageDocuments(
        metrics=metrics.value,
        report=report.value,
        computed_at=min(dates) if dates else None,
        current=current,
        computing_since=None if current else since,
    )


# --- slow files -------------------------------------------------------------------------------


def _file_state(key: str, start: Callable[[], None], make: Callable[[], None]) -> FileState:
    """The file under ``key``; the first request for a missing one starts its making."""
    data = cache.get(key)
    if data is not None:
        return FileState(data=data)
    if (error := cache.get(f"{key}:error")) is not None:
        return FileState(error=error)
    claimed, since = _claimed(f"{key}:making")
    if claimed:
        start()
    elif _overdue(since):
        make()
    data, error = cache.get(key), cache.get(f"{key}:error")  # an eager worker is done
    if data is not None or error is not None:
        return FileState(data=data, error=error)
    return FileState(making_since=since)


def _make_file(key: str, make: Callable[[], bytes]) -> None:
    """Make a file into the cache; a renderer that is missing is remembered as the file's error
    (for a while: installing Chromium makes the next request try again)."""
    try:
        make()
    except PdfRendererMissing as error:
        cache.set(f"{key}:error", str(error), timeout=CLAIM_S)
    finally:
        cache.delete(f"{key}:making")


def _report_pdf_key(study: Study, references: dict | None, fingerprint: str) -> str:
    key, _ = study_data_cache_keys(
        "report-pdf", study, fingerprint, report_settings(study=study, references=references)
    )
    return key


@shared_task(acks_late=True)
def report_pdf_task(study_id: int, references: dict | None = None) -> None:
    study = Study.objects.filter(pk=study_id).first()
    if study is not None:
        _report_pdf_make(study, references)


def _report_pdf_make(study: Study, references: dict | None) -> None:
    fingerprint = annotation_selectors.study_data_fingerprint(study=study)
    _make_file(
        _report_pdf_key(study, references, fingerprint),
        lambda: report_pdf_cached(study=study, references=references, fingerprint=fingerprint),
    )


def report_pdf(*, study: Study, references: dict | None = None) -> FileState:
    """The audit report's PDF for today's data, or since when it is being made."""
    fingerprint = annotation_selectors.study_data_fingerprint(study=study)
    key = _report_pdf_key(study, references, fingerprint)

    def make() -> None:
        _report_pdf_make(study, references)

    return _file_state(
        key, lambda: _queue(report_pdf_task, (study.pk, references), inline=make), make
    )


@shared_task(acks_late=True)
def reflect_report_file_task(face_set_id: int, fmt: str) -> None:
    face_set = FaceSet.objects.filter(pk=face_set_id).first()
    if face_set is not None:
        _reflect_file_make(face_set, fmt)


def _reflect_file_make(face_set: FaceSet, fmt: str) -> None:
    _make_file(
        audit_file_cache_key(face_set=face_set, fmt=fmt),
        lambda: audit_file_cached(face_set=face_set, fmt=fmt),
    )


def reflect_report_file(*, face_set: FaceSet, fmt: str) -> FileState:
    """A REFLECT set's audit report as HTML or PDF for today's answers, or since when it is
    being made."""

    def make() -> None:
        _reflect_file_make(face_set, fmt)

    return _file_state(
        audit_file_cache_key(face_set=face_set, fmt=fmt),
        lambda: _queue(reflect_report_file_task, (face_set.pk, fmt), inline=make),
        make,
    )
