"""First loads of the heavy staff pages on the demo study, cold and warm (issue 36 §4).

Builds the demo (``seed_demo`` and ``seed_reflect_demo``) in a fresh folder with its own SQLite
database and file cache, as ``make demo`` does, then for each run empties the cache and times,
through Django's test client (the whole request path: middleware, database, file cache,
templates; no network):

- ``first_response_*``: what a user waits for before the page shows (the study page's fragments
  answer at once with a placeholder and queue the computation; the report and the PDFs answer
  with a page that waits);
- ``ready_*``: from the first request until the content is there, the background job included
  (run in this process, as an idle worker would run it);
- ``warm_*``: the same request again once the content is cached.

Prints progress lines, then one JSON line (bench/harness.py).

    python bench/page_loads.py [--repeats 3] [--warmup 0] [--skip-pdf]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from harness import Runs, emit, machine, setup_django

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

HTMX = {"HTTP_HX_REQUEST": "true"}


def _timed(call):
    started = time.perf_counter()
    response = call()
    return time.perf_counter() - started, response


def _run_queued(sent: list) -> float:
    """Run the tasks the pages queued, as a worker would; seconds taken."""
    started = time.perf_counter()
    while sent:
        task, args = sent.pop(0)
        task.run(*args)
    return time.perf_counter() - started


def measure(client, sample: dict, sent: list, *, skip_pdf: bool) -> None:
    from django.core.cache import cache
    from django.urls import reverse

    cache.clear()
    slug = "demo"
    pages = {
        "study_page": (reverse("staff:study_detail", args=[slug]), {}),
        "summary": (reverse("metrics:study_summary", args=[slug]), HTMX),
        "statistics": (reverse("metrics:study_statistics", args=[slug]), HTMX),
        "disparities": (reverse("report:study_disparities", args=[slug]), HTMX),
        "report": (reverse("report:study_report", args=[slug]), {}),
    }
    ready_started = time.perf_counter()
    for name, (url, headers) in pages.items():
        seconds, response = _timed(lambda url=url, headers=headers: client.get(url, **headers))
        assert response.status_code in (200, 202), (name, response.status_code)
        sample[f"first_response_{name}_s"] = seconds
    sample["compute_study_documents_s"] = _run_queued(sent)
    sample["ready_study_page_s"] = time.perf_counter() - ready_started
    for name, (url, headers) in pages.items():
        seconds, response = _timed(lambda url=url, headers=headers: client.get(url, **headers))
        assert response.status_code == 200, (name, response.status_code)
        sample[f"warm_{name}_s"] = seconds
    if skip_pdf:
        return
    files = {
        "report_pdf": reverse("report:study_report_pdf", args=[slug]),
        "reflect_pdf": reverse(
            "reflect:report_document", args=["reflect-demo-synthetic-faces", "pdf"]
        ),
    }
    for name, url in files.items():
        started = time.perf_counter()
        seconds, response = _timed(lambda url=url: client.get(url))
        sample[f"first_response_{name}_s"] = seconds
        _run_queued(sent)
        done = client.get(url)
        assert done.status_code == 200 and done.content.startswith(b"%PDF"), name
        sample[f"ready_{name}_s"] = time.perf_counter() - started
        seconds, response = _timed(lambda url=url: client.get(url))
        sample[f"warm_{name}_s"] = seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=0)
    parser.add_argument("--skip-pdf", action="store_true", help="leave out the two PDFs")
    arguments = parser.parse_args()

    folder = tempfile.mkdtemp(prefix="page-loads-")
    setup_django(var_dir=folder, database_url=f"sqlite:///{folder}/db.sqlite3")
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from acrb_web.celery import app as celery_app
    from scoring.report import tasks

    print(f"building the demo in {folder} ...", flush=True)
    call_command("seed_demo", verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115
    call_command("seed_reflect_demo", verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115
    staff = get_user_model().objects.create_superuser("bench-staff", "b@example.org", "x")
    client = Client()
    client.force_login(staff)

    # The pages queue their work; this process plays the idle worker, so the timings split
    # into what the user waits for and what the worker does.
    celery_app.conf.task_always_eager = False
    sent: list = []
    for task in (tasks.page_documents_task, tasks.report_pdf_task, tasks.reflect_report_file_task):
        task.apply_async = lambda args=None, kwargs=None, _task=task, **options: sent.append(
            (_task, tuple(args or ()))
        )

    runs = Runs(repeats=arguments.repeats, warmup=arguments.warmup)
    for index, sample in enumerate(runs):
        measure(client, sample, sent, skip_pdf=arguments.skip_pdf)
        print(f"run {index}: {sorted(sample.items())}", flush=True)
    emit(
        {
            "benchmark": "page_loads",
            **runs.summary(),
            "machine": machine(["django", "numpy", "pandas"]),
            "command": " ".join(sys.argv),
        }
    )


if __name__ == "__main__":
    main()
