"""Past one machine: 1, 2 and 4 Celery workers on PostgreSQL and Redis, and the faults they survive.

Processes stand in for hosts. The benchmark starts its own PostgreSQL cluster and Redis server
(it restarts both, so it never touches shared ones), runs the migrations, starts gunicorn and
three groups of Celery workers, each group on its own queue: 1 worker on ``scale-1``, 2 on
``scale-2``, 4 on ``scale-4`` (a queue is what ACRB_API_QUEUE names; docs/deployment.md).
A loopback image API and a loopback OpenAI-compatible VLM answer after a fixed latency (4 s
and 2 s by default, as hosted image APIs and a busy VLM server do; the work is latency-bound).

One measured run, for k = 1, 2, 4: a fresh study of ``--items`` planned images is generated
through the image-API backend (``generation.tasks.generation_run``, chunks of
``--per-worker`` requests, so one solo worker keeps that many requests in flight; the
generator's cross-process cap ``--provider-cap`` is above 4 × that) and then judged by the
OpenAI-compatible cue judge (``scoring.tasks.scoring_job_enqueue``, ``--per-worker``
requests in flight per worker). ``throughput_k`` = items / (generation + judging wall time),
from enqueue to the job's end as the staff page reports it; ``speedup_4`` = throughput_4 /
throughput_1 within the run. The staff progress pages are polled through gunicorn meanwhile.

The fault run uses the four ``scale-4`` workers on a larger study: during generation one
worker is SIGKILLed (and not restarted) and Redis is restarted; during judging PostgreSQL is
restarted. Nothing is done by hand afterwards. ``lost`` counts planned images without a
stored result plus items without a judgment; ``duplicated`` counts result rows beyond one per
image and per (item, judge); ``finished`` is true when both jobs end successfully before the
deadline. API calls repeated by the recovery (a killed worker's requests are sent again) are
reported as ``repeated_api_calls``: repeated work, not duplicated results.

    .venv/bin/python bench/scale_out.py            # ~7 minutes on 2 shared cores
    .venv/bin/python bench/scale_out.py --quick    # one run, halved latencies: under 3 minutes

The last line printed is JSON (bench/harness.py). Exit status 1 when the fault run lost or
duplicated anything or did not finish.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import Runs, emit, machine  # noqa: E402
from scale_out_processes import Gunicorn, Postgres, Redis, Workers  # noqa: E402

from tests.support import image_api_server, openai_server  # noqa: E402

GROUPS = (1, 2, 4)
JUDGE = "loopback-vlm"
STAFF = ("bench-staff", "bench-staff-password")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one run of fewer items")
    parser.add_argument("--items", type=int, help="images per measured study (default 32)")
    parser.add_argument(
        "--fault-items", type=int, help="images of the fault study (default 96; 32 with --quick)"
    )
    parser.add_argument("--repeats", type=int, help="measured runs (default 3)")
    parser.add_argument("--generation-latency-ms", type=float,
                        help="image API latency (default 4000; 2000 with --quick)")  # fmt: skip
    parser.add_argument(
        "--judge-latency-ms", type=float, help="VLM judge latency (default 2000; 1000 with --quick)"
    )
    parser.add_argument("--per-worker", type=int, default=4, help="requests in flight per worker")
    parser.add_argument("--provider-cap", type=int, default=32, help="generator max_concurrency")
    parser.add_argument("--pg-port", type=int, default=5442)
    parser.add_argument("--redis-port", type=int, default=6391)
    parser.add_argument("--http-port", type=int, default=9001)
    parser.add_argument("--visibility-timeout", type=int,
                        help="seconds before Redis gives a dead worker's task to another (default 30; 8 with --quick)")  # fmt: skip
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    args.items = args.items or 32
    args.fault_items = args.fault_items or (32 if args.quick else 96)
    args.generation_latency_ms = args.generation_latency_ms or (2000.0 if args.quick else 4000.0)
    args.judge_latency_ms = args.judge_latency_ms or (1000.0 if args.quick else 2000.0)
    args.repeats = args.repeats or (1 if args.quick else 3)
    args.visibility_timeout = args.visibility_timeout or (8 if args.quick else 30)
    # Chunks of per_worker requests and batches of 2 × per_worker items: a study of a multiple
    # of 8 × per_worker images keeps all four workers busy to the end (no half-empty last wave).
    for name in ("items", "fault_items", "repeats", "per_worker", "provider_cap"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.per_worker * max(GROUPS) > args.provider_cap:
        parser.error(
            "--provider-cap must be at least 4 × --per-worker, or the cap, not the "
            "workers, sets the throughput"
        )
    return args


# --- the loopback servers --------------------------------------------------------------------


def image_rule(latency_s: float):
    """A distinct PNG per prompt (so no two items share an image or a judge cache entry)."""

    def rule(route: str, request: dict) -> image_api_server.Reply:
        digest = hashlib.sha256(str(request.get("prompt", "")).encode()).digest()
        png = image_api_server.tiny_png(tuple(digest[:3]))
        body = {"created": int(time.time()), "data": [{"b64_json": base64.b64encode(png).decode()}]}
        return image_api_server.Reply(body=body, delay_s=latency_s)

    return rule


def judge_rule(latency_s: float):
    def rule(request: dict) -> openai_server.Reply:
        answer = openai_server.completion("retained\nconfidence: 0.9")
        return openai_server.Reply(body=answer, delay_s=latency_s)

    return rule


# --- Django in this process (the "web host" that enqueues) -----------------------------------


def configure_django(env: dict[str, str]) -> None:
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from django.contrib.auth import get_user_model

    user, _ = get_user_model().objects.get_or_create(
        username=STAFF[0], defaults={"is_staff": True, "is_superuser": True}
    )
    user.set_password(STAFF[1])
    user.save()


def study_create(slug: str, items: int, generator: dict, folder: Path):
    """A study planning ``items`` images: base prompts × (neutral + 3 gender values). The slug
    is in every prompt, so no two studies share an image or a judge-cache entry."""
    import json

    from generation import services

    per_prompt = 4
    count = -(-items // per_prompt)
    path = folder / f"{slug}-prompts.json"
    prompts = [
        {
            "prompt_id": f"p{i}",
            "text": f"A person cooking dinner, scene {i} of {slug}",
            "domain": "food",
        }
        for i in range(count)
    ]
    path.write_text(json.dumps(prompts), encoding="utf-8")
    config = services.StudyConfig(
        slug=slug, name=slug, base_prompts=str(path), attributes=("gender",),
        generators={"loopback-api": generator},
    )  # fmt: skip
    return services.study_setup(config=config)


class Staff:
    """A logged-in staff browser on gunicorn, polling the progress pages like a person would."""

    def __init__(self, base_url: str):
        import requests

        self.base_url = base_url
        self.session = requests.Session()
        self.ok = self.failed = 0
        self._last = 0.0
        login = f"{base_url}/accounts/login/"
        self.session.get(login, timeout=10)
        token = self.session.cookies.get("csrftoken", "")
        reply = self.session.post(
            login,
            data={"username": STAFF[0], "password": STAFF[1], "csrfmiddlewaretoken": token},
            headers={"Referer": login},
            timeout=10,
            allow_redirects=False,
        )
        if reply.status_code != 302:
            raise RuntimeError(f"staff login on gunicorn failed: HTTP {reply.status_code}")

    def poll(self, path: str) -> None:
        if time.monotonic() - self._last < 1.0:
            return
        self._last = time.monotonic()
        try:
            reply = self.session.get(self.base_url + path, timeout=10)
            self.ok += reply.status_code == 200
            self.failed += reply.status_code != 200
        except Exception:  # noqa: BLE001 - the database may be restarting; counted, not fatal
            self.failed += 1


def job_wait(job_id: int, *, staff: Staff, page: str, deadline: float, on_tick=None) -> str:
    """Poll the job row (and the staff page) until it ends; returns its status or "timeout".
    Survives a database restart: a failed poll closes the connection and tries again."""
    from django.db import InterfaceError, OperationalError, connection

    from annotations.models import BackgroundJob

    while time.monotonic() < deadline:
        staff.poll(page)
        try:
            status = BackgroundJob.objects.values_list("status", flat=True).get(pk=job_id)
            if on_tick:
                on_tick()
        except (OperationalError, InterfaceError):
            connection.close()
            time.sleep(0.5)
            continue
        if status in ("succeeded", "failed"):
            return status
        time.sleep(0.2)
    return "timeout"


def stage_run(
    study, *, args, staff: Staff, deadline: float, during_generation=None, during_judging=None
) -> dict:
    """Generate the study's images, then judge them; wall time of each stage and job status."""
    from django.urls import reverse

    from generation import tasks as generation_tasks
    from scoring import tasks as scoring_tasks

    started = time.perf_counter()
    job = generation_tasks.generation_run(study=study, chunk_size=args.per_worker)
    page = reverse("generation:generation_progress", args=[study.slug])
    generation_status = job_wait(
        job.pk, staff=staff, page=page, deadline=deadline, on_tick=during_generation
    )
    generated = time.perf_counter()
    job = scoring_tasks.scoring_job_enqueue(
        study=study, judge_name=JUDGE, batch_size=2 * args.per_worker, chunk_size=args.per_worker
    )
    page = reverse("scoring:job_progress", args=[job.pk])
    judging_status = job_wait(
        job.pk, staff=staff, page=page, deadline=deadline, on_tick=during_judging
    )
    judged = time.perf_counter()
    return {
        "generation_s": generated - started,
        "judging_s": judged - generated,
        "generation_status": generation_status,
        "judging_status": judging_status,
    }


# --- loss and duplication, counted from the database -------------------------------------------


def outcome_count(study) -> dict:
    from django.db.models import Count

    from annotations.models import AutomatedJudgment, Item
    from generation.models import GenerationRequest, PlannedPrompt

    planned = PlannedPrompt.objects.filter(study=study, status="planned").count()
    requests = GenerationRequest.objects.filter(study=study)
    finished = requests.filter(status__in=["done", "refused"], item__isnull=False).count()
    items = Item.objects.filter(study=study)
    judgments = AutomatedJudgment.objects.filter(item__study=study, judge=JUDGE)
    judged = judgments.filter(error="").values("item").distinct().count()
    duplicate_items = sum(
        row["n"] - 1 for row in items.values("item_id").annotate(n=Count("pk")).filter(n__gt=1)
    )
    duplicate_judgments = sum(
        row["n"] - 1 for row in judgments.values("item").annotate(n=Count("pk")).filter(n__gt=1)
    )
    return {
        "planned": planned,
        "generated": finished,
        "judged": judged,
        "lost": (planned - finished) + (finished - judged),
        "duplicated": duplicate_items + duplicate_judgments + max(0, requests.count() - planned),
    }


# --- the benchmark ------------------------------------------------------------------------------


def measured_runs(args, *, folder: Path, generator: dict, staff: Staff, run_budget_s: float):
    from django.conf import settings

    # Warm-up: each worker loads the generator and the judge and opens its connections once.
    for workers in GROUPS:
        settings.ACRB_API_QUEUE = f"scale-{workers}"
        study = study_create(f"scale-{workers}-warmup", 4 * workers, generator, folder)
        stage_run(study, args=args, staff=staff, deadline=time.monotonic() + 120)
    runs = Runs(repeats=args.repeats, warmup=0, budget_s=run_budget_s)
    for index, sample in enumerate(runs):
        for workers in GROUPS:
            settings.ACRB_API_QUEUE = f"scale-{workers}"
            study = study_create(f"scale-{workers}-run{index}", args.items, generator, folder)
            deadline = time.monotonic() + 300
            stages = stage_run(study, args=args, staff=staff, deadline=deadline)
            counts = outcome_count(study)
            if counts["lost"] or counts["duplicated"] or "timeout" in stages.values():
                raise RuntimeError(f"measured run with {workers} workers: {stages} {counts}")
            wall = stages["generation_s"] + stages["judging_s"]
            sample[f"throughput_{workers}"] = round(counts["planned"] / wall, 3)
            sample[f"generation_items_per_s_{workers}"] = round(
                counts["planned"] / stages["generation_s"], 3
            )
            sample[f"judging_items_per_s_{workers}"] = round(
                counts["planned"] / stages["judging_s"], 3
            )
            print(
                f"run {index}: {workers} worker(s): {sample[f'throughput_{workers}']} items/s",
                flush=True,
            )
        sample["speedup_4"] = round(sample["throughput_4"] / sample["throughput_1"], 3)
    return runs


def fault_run(args, *, folder, generator, staff, workers: Workers, redis: Redis,
              postgres: Postgres, api: image_api_server.ImageApiServer) -> dict:  # fmt: skip
    """Four workers; kill one and restart Redis while generating, restart PostgreSQL while
    judging; then wait, doing nothing, for both jobs to end."""
    from django.conf import settings

    from generation import selectors

    settings.ACRB_API_QUEUE = "scale-4"
    study = study_create("scale-fault", args.fault_items, generator, folder)
    calls_before = len(api.requests)
    events: list[dict] = []
    started = time.monotonic()

    def note(event: str) -> None:
        events.append({"event": event, "at_s": round(time.monotonic() - started, 2)})
        print(f"fault run: {event} at {events[-1]['at_s']} s", flush=True)

    def during_generation() -> None:
        finished = selectors.generation_status_counts(study=study).finished
        if finished >= args.fault_items // 4 and not events:
            workers.kill(4, 0)
            note("SIGKILL one of the four workers (not restarted)")
        elif finished >= args.fault_items // 2 and len(events) == 1:
            redis.restart()
            note("Redis restarted")

    def during_judging() -> None:
        from scoring.models import ScoringBatch

        done = sum(
            ScoringBatch.objects.filter(job__study=study).values_list("done_items", flat=True)
        )
        if done >= args.fault_items // 3 and len(events) == 2:
            postgres.restart()
            note("PostgreSQL restarted")

    deadline = time.monotonic() + 240
    stages = stage_run(study, args=args, staff=staff, deadline=deadline,
                       during_generation=during_generation, during_judging=during_judging)  # fmt: skip
    counts = _retrying(lambda: outcome_count(study))
    finished = (
        stages["generation_status"] == "succeeded"
        and stages["judging_status"] == "succeeded"
        and counts["lost"] == 0
    )
    return {
        "events": events,
        "faults_injected": len(events),
        "generation_s": round(stages["generation_s"], 2),
        "judging_s": round(stages["judging_s"], 2),
        "generation_status": stages["generation_status"],
        "judging_status": stages["judging_status"],
        "repeated_api_calls": len(api.requests) - calls_before - counts["planned"],
        **counts,
        "finished": finished and len(events) == 3,
    }


def _retrying(read, attempts: int = 20):
    from django.db import InterfaceError, OperationalError, connection

    for _ in range(attempts):
        try:
            return read()
        except (OperationalError, InterfaceError):
            connection.close()
            time.sleep(0.5)
    return read()


def main(argv=None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    folder = Path(tempfile.mkdtemp(prefix="acrb_scaleout_bench_"))
    folder.chmod(0o755)
    postgres = Postgres(folder / "pg", port=args.pg_port)
    redis = Redis(folder / "redis", port=args.redis_port)
    api = image_api_server.ImageApiServer(image_rule(args.generation_latency_ms / 1000))
    vlm = openai_server.OpenAIServer(judge_rule(args.judge_latency_ms / 1000))
    gunicorn = workers = None
    try:
        postgres.start()
        redis.start()
        api.__enter__()
        vlm.start()
        backends = folder / "backends.yaml"
        backends.write_text(
            "judges:\n"
            f"  {JUDGE}:\n    kind: cue_vlm\n    name: {JUDGE}\n    version: '1'\n"
            f"    backend: {{type: openai, endpoint: '{vlm.base_url}', model: loopback,"
            f" concurrency: {args.per_worker}, max_retries: 4, timeout_s: 30,"
            " supports_logprobs: false}\n",
            encoding="utf-8",
        )
        env = {
            "DJANGO_SETTINGS_MODULE": "acrb_web.settings",
            "DATABASE_URL": postgres.url("acrb_scaleout"),
            "CELERY_BROKER_URL": redis.url(),
            "CELERY_VISIBILITY_TIMEOUT": str(args.visibility_timeout),
            "ACRB_VAR_DIR": str(folder / "var"),
            "ACRB_MEDIA_ROOT": str(folder / "media"),
            "ACRB_BACKENDS_FILE": str(backends),
            "ACRB_CACHE_URL": "",
            "CELERY_TASK_ALWAYS_EAGER": "0",
            "PYTHONUNBUFFERED": "1",
        }
        postgres.create_database("acrb_scaleout")
        configure_django(env)
        generator = {
            "kind": "openai-images", "model": "loopback", "base_url": api.base_url,
            "max_concurrency": args.provider_cap, "max_retries": 4, "backoff_s": 0.5,
            "timeout_s": 30,
        }  # fmt: skip
        gunicorn = Gunicorn(folder, port=args.http_port, env=env)
        gunicorn.start()
        workers = Workers(folder, env=env)
        for size in GROUPS:
            workers.start_group(size, queue=f"scale-{size}")
        workers.wait_ready()
        staff = Staff(gunicorn.base_url)
        print(f"set up in {time.monotonic() - started:.0f} s", flush=True)
        runs = measured_runs(args, folder=folder, generator=generator, staff=staff,
                             run_budget_s=150 if args.quick else 240)  # fmt: skip
        fault = fault_run(args, folder=folder, generator=generator, staff=staff,
                          workers=workers, redis=redis, postgres=postgres, api=api)  # fmt: skip
        report = {
            "benchmark": "scale_out",
            "quick": args.quick,
            "items": args.items,
            "generation_latency_ms": args.generation_latency_ms,
            "judge_latency_ms": args.judge_latency_ms,
            "per_worker_in_flight": args.per_worker,
            "provider_cap": args.provider_cap,
            "workers": list(GROUPS),
            "queues": [f"scale-{size}" for size in GROUPS],
            **runs.summary(),
            "target_speedup_4": 3.5,
            "fault": fault,
            "lost": fault["lost"],
            "duplicated": fault["duplicated"],
            "finished": fault["finished"],
            "web_polls": {"ok": staff.ok, "failed": staff.failed},
            "wall_s": round(time.monotonic() - started, 1),
            **machine(["django", "celery", "kombu", "redis", "psycopg", "gunicorn"]),
            "postgresql": postgres.version(),
            "redis_server": redis.version(),
        }
        emit(report)
        return 0 if fault["finished"] and not fault["lost"] and not fault["duplicated"] else 1
    finally:
        if workers is not None:
            workers.stop_all()
        if gunicorn is not None:
            gunicorn.stop()
        vlm.stop()
        api.__exit__(None, None, None)
        redis.stop()
        postgres.stop()
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
        else:
            print(f"kept {folder}", file=sys.stderr)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    raise SystemExit(main())
