"""Load benchmark of the annotator survey. Prints progress, then one JSON line.

For each study size N (small 4,000, large 100,000; 1,000 and 10,000 with ``--quick``):

1. seed: a study of N items sharing a few small real PNGs, K annotators with a password, and a
   k=2 batch made by ``annotations.services.batch_create`` (items and users are bulk-inserted
   in this process; the batch goes through the real service, and its time is printed);
   then VACUUM ANALYZE (PostgreSQL; ANALYZE on SQLite), as autovacuum would soon do on a live
   server after a bulk insert;
2. load: the app under gunicorn on 127.0.0.1 (an ephemeral port), and K threads, one
   ``requests.Session`` each, that log in with the CSRF token, run a few unrecorded warm-up
   cycles, and then run timed cycles of the survey as the browser drives it (``--flow htmx``,
   the default): one htmx POST answers the item on screen and returns the next one, then the
   image that the new page preloads is fetched. ``--flow plain`` is the no-JavaScript flow:
   GET /batches/<id>/next/, the item page it redirects to, and a POST answer.
   Between answers each annotator pauses for a think time: ``--think-ms`` (default 1,500 ms,
   the app's own "too fast" threshold, so faster than careful people label) drawn from
   ``--think-dist`` (default exponential: independent people, with many pauses far shorter
   than anyone could answer in); each annotator starts at a random moment of the first pause.
   ``--think-ms 0`` is the saturation test: every annotator answers instantly;
3. queries: next, item page and plain answer, then the htmx answer and the image it preloads,
   run in this process through ``django.test.Client`` under ``CaptureQueriesContext`` (the app
   is not changed), giving SQL statements per request, the single-request time without
   concurrency and the slowest query of each. CPU per cycle is read from gunicorn's processes,
   the local PostgreSQL server's processes and this process.

Latency of a step is the client's wall time for it; the server's own time per request comes
from gunicorn's access log. ``p95_ms_<size>`` pools the steps of that size (next + answer, or
answer + image); ``p99_ms`` is the larger of the two sizes' pooled p99.

The database given by ``--database-url`` (default: PostgreSQL ``acrb_bench`` on 127.0.0.1:5432,
user postgres) is DROPPED and recreated; ``--database-url sqlite`` uses a file in the temporary
folder. Every request goes to 127.0.0.1; loops are bounded by cycle count and by
``--max-seconds``; gunicorn and the temporary folder are removed on exit, Ctrl-C included.

Run: .venv/bin/python bench/annotation_load.py [--quick] [--annotators 24] [--workers 4 --threads 2]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psutil
import requests
from harness import emit, machine, spread

ROOT = Path(__file__).resolve().parent.parent
PYTHON = Path(sys.executable)
GUNICORN = PYTHON.parent / "gunicorn"
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/acrb_bench"
PASSWORD = "bench-password-not-secret"
ANSWERS = ("refusal", "retained", "erased", "substituted")
PRELOAD_PATTERN = re.compile(r'rel="preload" as="image" href="([^"]+)"')
ATTRIBUTE_VALUES = [
    ("neutral", "neutral"),
    ("culture", "Korean"),
    ("culture", "Nigerian"),
    ("culture", "Mexican"),
    ("gender", "woman"),
    ("religion", "Sikh"),
]
N_IMAGES = 32
REQUEST_TIMEOUT_S = 30
START_LINE_TIMEOUT_S = 600


def log(message: str) -> None:
    print(f"[annotation_load {time.strftime('%H:%M:%S')}] {message}", flush=True)


# --- the database and the Django process -------------------------------------------------


def database_url_resolved(url: str, workdir: Path) -> str:
    if url == "sqlite":
        return f"sqlite:///{workdir / 'bench.sqlite3'}"
    return url


def database_reset(url: str) -> None:
    """Drop and recreate the benchmark database (PostgreSQL) or delete its file (SQLite)."""
    parts = urlsplit(url)
    if parts.scheme.startswith("sqlite"):
        Path(parts.path[1:] if parts.path.startswith("//") else parts.path).unlink(missing_ok=True)
        return
    import psycopg

    name = parts.path.lstrip("/")
    if not re.fullmatch(r"[A-Za-z0-9_]+", name):
        raise SystemExit(f"refusing to drop a database named {name!r}")
    with psycopg.connect(_maintenance_url(parts), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def database_drop(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme.startswith("sqlite"):
        return  # the file lives in the temporary folder
    import psycopg

    with psycopg.connect(_maintenance_url(parts), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{parts.path.lstrip("/")}" WITH (FORCE)')


def _maintenance_url(parts) -> str:
    """The server's ``postgres`` database, from which the benchmark database is dropped."""
    return urlunsplit(("postgresql", parts.netloc, "/postgres", "", ""))


def app_environment(database_url: str, workdir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="acrb_web.settings",
        DATABASE_URL=database_url,
        ACRB_VAR_DIR=str(workdir / "var"),
        ACRB_MEDIA_ROOT=str(workdir / "media"),
        DJANGO_DEBUG="0",
        ACRB_LOG_LEVEL="WARNING",
        CELERY_BROKER_URL="filesystem://",
        PYTHONPATH=str(ROOT),
    )
    return env


def migrate(env: dict[str, str]) -> None:
    started = time.perf_counter()
    done = subprocess.run(
        [str(PYTHON), "manage.py", "migrate", "--no-input", "-v", "0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode:
        raise RuntimeError(f"migrate failed:\n{done.stdout}\n{done.stderr}")
    log(f"schema migrated in {time.perf_counter() - started:.1f} s")


def django_setup(env: dict[str, str]) -> None:
    for key in (
        "DJANGO_SETTINGS_MODULE",
        "DATABASE_URL",
        "ACRB_VAR_DIR",
        "ACRB_MEDIA_ROOT",
        "DJANGO_DEBUG",
        "ACRB_LOG_LEVEL",
        "CELERY_BROKER_URL",
    ):
        os.environ[key] = env[key]
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


# --- seeding a study ---------------------------------------------------------------------


@dataclass
class Seeded:
    batch_id: int
    usernames: list[str]
    seconds: dict[str, float]


def png_names(media_root: Path, slug: str) -> list[str]:
    """A few small real PNGs that all items share (a file per item would only cost disk)."""
    from PIL import Image

    folder = media_root / "studies" / slug
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for index in range(N_IMAGES):
        colour = (37 * index % 256, 91 * index % 256, 53 * index % 256)
        Image.new("RGB", (64, 64), colour).save(folder / f"img{index:02d}.png")
        names.append(f"studies/{slug}/img{index:02d}.png")
    return names


def study_seed(*, label: str, n_items: int, n_annotators: int, media_root: Path) -> Seeded:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.db import connection

    from annotations import services
    from annotations.models import Annotator, Batch, Item

    seconds: dict[str, float] = {}
    started = time.perf_counter()
    slug = f"bench-{label}"
    study = services.study_create(
        name=f"Load benchmark, {label} (synthetic)", slug=slug, overlap_k=2, is_synthetic_demo=True
    )
    values = [
        services.attribute_value_get_or_create(
            study=study, attribute=attribute, value=value, cue_description=f"{value} cues"
        )
        for attribute, value in ATTRIBUTE_VALUES
    ]
    images = png_names(media_root, slug)
    Item.objects.bulk_create(
        (
            Item(
                study=study,
                item_id=f"{label}-{index:06d}",
                image=images[index % len(images)],
                generator="synthetic",
                prompt=f"A portrait of a person at work, variant {index}",
                base_prompt_id=f"p{index % 500:03d}",
                domain=("work", "food", "faith", "family")[index % 4],
                attribute_value=values[index % len(values)],
                cue=f"{values[index % len(values)].value} cues",
            )
            for index in range(n_items)
        ),
        batch_size=5000,
    )
    seconds["items"] = time.perf_counter() - started

    started = time.perf_counter()
    user_model = get_user_model()
    usernames = [f"bench-{label}-{index:02d}" for index in range(n_annotators)]
    password_hash = make_password(PASSWORD)  # hashed once: PBKDF2 per user would take seconds
    users = user_model.objects.bulk_create(
        [user_model(username=name, password=password_hash) for name in usernames]
    )
    annotators = Annotator.objects.bulk_create(
        [Annotator(user=user, group=f"g{index % 3}") for index, user in enumerate(users)]
    )
    seconds["annotators"] = time.perf_counter() - started

    started = time.perf_counter()
    batch = services.batch_create(
        request=services.batch_request_build(
            study=study,
            name="load",
            policy=Batch.Policy.K_OVERLAP,
            annotators=annotators,
            overlap_k=2,
            seed=0,
        )
    )
    seconds["batch_create"] = time.perf_counter() - started

    started = time.perf_counter()
    with connection.cursor() as cursor:
        # Autovacuum does this on a live server soon after a bulk insert; VACUUM also sets the
        # visibility map that index-only scans (the progress count) rely on.
        cursor.execute("VACUUM ANALYZE" if connection.vendor == "postgresql" else "ANALYZE")
    seconds["analyze"] = time.perf_counter() - started
    return Seeded(batch.pk, usernames, seconds)


# --- the server ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def gunicorn_server(env: dict[str, str], workdir: Path, workers: int, threads: int):
    """Yield the base URL of a gunicorn serving the app; the whole process group is ended."""
    port = free_port()
    log_path = workdir / f"gunicorn-{port}.log"
    access_path = workdir / f"access-{port}.log"
    command = [
        str(GUNICORN),
        "acrb_web.wsgi",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--threads",
        str(threads),
        "--worker-class",
        "gthread",
        "--timeout",
        "60",
        # Longer than any think time, as a browser or a reverse proxy keeps its connection:
        # the client does not retry, so a keep-alive closed mid-request would be an error.
        "--keep-alive",
        "75",
        "--log-level",
        "warning",
        "--error-logfile",
        str(log_path),
        # The server's own time per request (µs), to tell server work from queueing and client.
        "--access-logfile",
        str(access_path),
        "--access-logformat",
        "%(D)s %(m)s %(U)s",
    ]
    with log_path.open("w") as log_file:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        server_wait_ready(process, base_url, log_path)
        yield base_url, process, access_path
    finally:
        process_group_end(process)


def server_wait_ready(process: subprocess.Popen, base_url: str, log_path: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited early:\n{log_path.read_text()[-3000:]}")
        with contextlib.suppress(requests.RequestException):
            if requests.get(f"{base_url}/accounts/login/", timeout=5).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"gunicorn did not answer within 60 s:\n{log_path.read_text()[-3000:]}")


def process_group_end(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=15)


def cpu_snapshot(processes: list[psutil.Process]) -> dict[int, float]:
    seconds = {}
    for proc in processes:
        with contextlib.suppress(psutil.Error):
            times = proc.cpu_times()
            seconds[proc.pid] = times.user + times.system
    return seconds


def cpu_delta(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds spent between two snapshots by the processes alive at both."""
    return sum(after[pid] - before[pid] for pid in before.keys() & after.keys())


def postgres_cpu_seconds() -> float | None:
    """CPU seconds used so far by the local PostgreSQL server: its live processes, plus what
    its ended backends used (the postmaster's reaped children). Backends come and go during a
    run (Django reconnects after CONN_MAX_AGE), so counting live ones alone loses their time.
    None when no local PostgreSQL server is visible."""
    servers = [
        proc
        for proc in psutil.process_iter(["name", "ppid"])
        if proc.info["name"] == "postgres"
        and not _is_postgres(proc.info["ppid"])  # the postmaster, not one of its children
    ]
    if not servers:
        return None
    total = 0.0
    for server in servers:
        with contextlib.suppress(psutil.Error):
            times = server.cpu_times()
            total += times.user + times.system + times.children_user + times.children_system
            for child in server.children():
                with contextlib.suppress(psutil.Error):
                    times = child.cpu_times()
                    total += times.user + times.system
    return total


def _is_postgres(pid: int) -> bool:
    try:
        return psutil.Process(pid).name() == "postgres"
    except psutil.Error:
        return False


# --- the simulated annotators ------------------------------------------------------------


@dataclass
class AnnotatorResult:
    samples: dict[str, list[float]] = field(
        default_factory=lambda: {
            "next": [],
            "next_redirect": [],
            "item_page": [],
            "answer": [],
            "image": [],
        }
    )
    cycles: int = 0
    errors: list[str] = field(default_factory=list)


@dataclass
class Coordination:
    """What the annotator threads share: a start line, a stop flag, the deadline, login slots."""

    start_line: threading.Barrier
    stop: threading.Event = field(default_factory=threading.Event)
    deadline: float = math.inf  # set by the main thread once everyone is past the start line
    # Logins hash a password (PBKDF2, about a CPU-second each): two at a time, so that the
    # login storm does not time out; logins are not measured.
    login_slots: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(2))


class AnnotatorThread(threading.Thread):
    """One annotator: log in, warm up, wait at the start line, then run timed cycles."""

    def __init__(self, *, base_url, username, batch_id, args, shared: Coordination, seed):
        super().__init__(daemon=True, name=username)
        self.base_url, self.username, self.batch_id = base_url, username, batch_id
        self.cycles, self.warmup, self.think_s = args.cycles, args.warmup, args.think_ms / 1000
        self.think_dist = args.think_dist
        self.flow = args.flow
        self.current: str | None = None  # htmx flow: the assignment page now on screen
        self.shared = shared
        self.rng = random.Random(seed)
        self.result = AnnotatorResult()
        self.session = requests.Session()
        self.session.trust_env = False  # never through a proxy: 127.0.0.1 only

    def run(self):
        shared = self.shared
        try:
            with shared.login_slots:
                self.login()
            for _ in range(self.warmup):
                self.cycle(record=False)
            shared.start_line.wait(timeout=START_LINE_TIMEOUT_S)
            if self.think_s and self.think_dist != "fixed":
                # People do not start in step: each annotator comes in somewhere in the first
                # think time, so the first cycles are not one burst of K requests.
                time.sleep(self.rng.uniform(0, self.think_s))
            for _ in range(self.cycles):
                if shared.stop.is_set() or time.monotonic() > shared.deadline:
                    break
                if not self.cycle(record=True):
                    break
                self.result.cycles += 1
                if self.think_s:
                    time.sleep(self.think_time())
        except (requests.RequestException, RuntimeError, threading.BrokenBarrierError) as exc:
            self.result.errors.append(f"{self.username}: {exc!r}")
            shared.start_line.abort()
        finally:
            self.session.close()

    def think_time(self) -> float:
        """Seconds before the next answer, with mean ``--think-ms``.

        ``fixed`` keeps every annotator in lock step once they line up (the same pause after
        the same queueing), so K requests keep arriving together: a burst test, not a human
        pace. ``exp`` (exponential) is the memoryless arrival pattern of independent people;
        it includes pauses far shorter than a person could answer in, so it is the harsher of
        the two random choices. ``uniform`` draws from [0.5, 1.5] × the mean.
        """
        if self.think_dist == "exp":
            return self.rng.expovariate(1 / self.think_s)
        if self.think_dist == "uniform":
            return self.rng.uniform(0.5 * self.think_s, 1.5 * self.think_s)
        return self.think_s

    def login(self):
        url = f"{self.base_url}/accounts/login/"
        self.session.get(url, timeout=REQUEST_TIMEOUT_S).raise_for_status()
        response = self.session.post(
            url,
            data={
                "username": self.username,
                "password": PASSWORD,
                "csrfmiddlewaretoken": self.session.cookies["csrftoken"],
            },
            allow_redirects=False,
            timeout=REQUEST_TIMEOUT_S,
        )
        if response.status_code != 302:
            raise RuntimeError(f"login failed with HTTP {response.status_code}")

    def cycle(self, *, record: bool) -> bool:
        return (
            self.cycle_htmx(record=record)
            if self.flow == "htmx"
            else self.cycle_plain(record=record)
        )

    def cycle_htmx(self, *, record: bool) -> bool:
        """The browser's flow: one htmx POST answers and returns the next item's fragment, then
        the image the fragment preloads is fetched. False when the queue is empty."""
        if self.current is None:
            page = self.session.get(
                f"{self.base_url}/batches/{self.batch_id}/next/", timeout=REQUEST_TIMEOUT_S
            )
            if "/assignments/" not in page.url:
                return False
            self.current = page.url.removeprefix(self.base_url)
        started = time.perf_counter()
        answer = self.session.post(
            f"{self.base_url}{self.current}answer/",
            data={"answer": self.rng.choice(ANSWERS)},
            headers={"HX-Request": "true", "X-CSRFToken": self.session.cookies["csrftoken"]},
            allow_redirects=False,
            timeout=REQUEST_TIMEOUT_S,
        )
        answered = time.perf_counter()
        if answer.status_code != 200:
            raise RuntimeError(f"htmx answer: HTTP {answer.status_code}")
        if "HX-Redirect" in answer.headers:
            return False  # the batch is done
        self.current = answer.headers["HX-Push-Url"]
        preload = PRELOAD_PATTERN.search(answer.text)
        image_s = 0.0
        if preload:
            image = self.session.get(
                f"{self.base_url}{preload.group(1)}", timeout=REQUEST_TIMEOUT_S
            )
            image_s = time.perf_counter() - answered
            if image.status_code != 200:
                raise RuntimeError(f"image: HTTP {image.status_code}")
        if record:
            self.result.samples["answer"].append(1000 * (answered - started))
            if preload:
                self.result.samples["image"].append(1000 * image_s)
        return True

    def cycle_plain(self, *, record: bool) -> bool:
        """next (redirect + item page) then answer; False when the queue is empty."""
        started = time.perf_counter()
        redirect = self.session.get(
            f"{self.base_url}/batches/{self.batch_id}/next/",
            allow_redirects=False,
            timeout=REQUEST_TIMEOUT_S,
        )
        redirected = time.perf_counter()
        if redirect.status_code == 200:
            return False  # the batch-done page: this annotator's queue is empty
        if redirect.status_code != 302:
            raise RuntimeError(f"next: HTTP {redirect.status_code}")
        location = redirect.headers["Location"]
        page = self.session.get(f"{self.base_url}{location}", timeout=REQUEST_TIMEOUT_S)
        shown = time.perf_counter()
        if page.status_code != 200:
            raise RuntimeError(f"item page: HTTP {page.status_code}")
        answer = self.session.post(
            f"{self.base_url}{location}answer/",
            data={
                "answer": self.rng.choice(ANSWERS),
                "csrfmiddlewaretoken": self.session.cookies["csrftoken"],
            },
            allow_redirects=False,
            timeout=REQUEST_TIMEOUT_S,
        )
        answered = time.perf_counter()
        if answer.status_code != 302:
            raise RuntimeError(f"answer: HTTP {answer.status_code}")
        if record:
            samples = self.result.samples
            samples["next_redirect"].append(1000 * (redirected - started))
            samples["item_page"].append(1000 * (shown - redirected))
            samples["next"].append(1000 * (shown - started))
            samples["answer"].append(1000 * (answered - shown))
        return True


SERVER_STEPS = (
    ("answer", re.compile(r"POST /assignments/\d+/answer/$")),
    ("next_redirect", re.compile(r"GET /batches/\d+/next/$")),
    ("item_page", re.compile(r"GET /assignments/\d+/$")),
    ("image", re.compile(r"GET /items/\d+/image/$")),
)


def server_times(access_path: Path, offset: int) -> dict[str, list[float]]:
    """Milliseconds gunicorn spent on each request logged after ``offset``, by step."""
    times: dict[str, list[float]] = {step: [] for step, _ in SERVER_STEPS}
    with access_path.open() as log_file:
        log_file.seek(offset)
        for line in log_file:
            micros, _, request = line.strip().partition(" ")
            for step, pattern in SERVER_STEPS:
                if pattern.match(request):
                    times[step].append(int(micros) / 1000)
                    break
    return times


def load_run(
    *, base_url, server, access_path: Path, seeded: Seeded, on_postgres: bool, args
) -> dict:
    # The main thread is a party of the start line too: the clock starts when all have arrived.
    shared = Coordination(start_line=threading.Barrier(len(seeded.usernames) + 1))
    threads = [
        AnnotatorThread(
            base_url=base_url,
            username=name,
            batch_id=seeded.batch_id,
            args=args,
            shared=shared,
            seed=index,
        )
        for index, name in enumerate(seeded.usernames)
    ]
    gunicorn_procs = [psutil.Process(server.pid), *psutil.Process(server.pid).children()]
    try:
        for thread in threads:
            thread.start()
        try:
            shared.start_line.wait(timeout=START_LINE_TIMEOUT_S)
        except threading.BrokenBarrierError:
            log("some annotators failed before the start line; stopping this size")
            shared.stop.set()
        shared.deadline = time.monotonic() + args.max_seconds
        access_offset = access_path.stat().st_size  # logins and warm-up cycles are behind us
        pg_before = postgres_cpu_seconds() if on_postgres else None
        before = [time.process_time(), cpu_snapshot(gunicorn_procs), pg_before]
        started = time.perf_counter()
        for thread in threads:
            while thread.is_alive():
                thread.join(0.5)
        wall = time.perf_counter() - started
    finally:
        shared.stop.set()
        shared.start_line.abort()
    cpu = {
        "client": round(time.process_time() - before[0], 2),
        "gunicorn": round(cpu_delta(before[1], cpu_snapshot(gunicorn_procs)), 2),
        "postgres": (
            round(postgres_cpu_seconds() - before[2], 2) if before[2] is not None else None
        ),
    }
    summary = load_summary(threads, wall, cpu)
    summary["server_steps"] = {
        step: _percentiles(values)
        for step, values in server_times(access_path, access_offset).items()
        if values
    }
    return summary


def percentile(values: list[float], pct: float) -> float | None:
    """Nearest-rank percentile."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]


def load_summary(threads: list[AnnotatorThread], wall: float, cpu: dict) -> dict:
    samples: dict[str, list[float]] = {}
    for thread in threads:
        for step, values in thread.result.samples.items():
            samples.setdefault(step, []).extend(values)
    samples["pooled"] = samples["next"] + samples["answer"] + samples["image"]
    steps = {step: _percentiles(values) for step, values in samples.items()}
    cycles = sum(thread.result.cycles for thread in threads)
    errors = [error for thread in threads for error in thread.result.errors]
    return {
        "steps": steps,
        "cycles": cycles,
        # CPU per cycle (3 requests) is what the 2 cores must supply; latency is mostly queueing
        # for it once K annotators with no think time saturate them.
        "cpu_ms_per_cycle": {
            name: round(1000 * seconds / cycles, 2) if cycles else None
            for name, seconds in cpu.items()
        },
        "seconds": round(wall, 2),
        "cycles_per_s": round(cycles / wall, 1) if wall else None,
        "cpu_seconds": cpu,
        "errors": errors,
    }


def _percentiles(values: list[float]) -> dict:
    return {
        "n": len(values),
        **{f"p{p}_ms": _round(percentile(values, p)) for p in (50, 95, 99)},
        "max_ms": _round(max(values, default=None)),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


# --- SQL queries per request, in this process ------------------------------------------


def query_profile(*, batch_id: int, username: str, cycles: int) -> dict:
    """Queries, time and slowest query per request: next, item page and answer of the plain
    flow, then the htmx answer (which returns the next item) and the image it preloads."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    per_step: dict[str, list[tuple[int, float, float, dict]]] = {
        "next": [],
        "item": [],
        "answer": [],
        "answer_htmx": [],
        "image": [],
    }

    def measured(step, call):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            response = call()
            elapsed = 1000 * (time.perf_counter() - started)
        queries = captured.captured_queries
        slowest = max(queries, key=lambda q: float(q["time"]), default={"sql": "", "time": "0"})
        per_step[step].append(
            (len(queries), elapsed, 1000 * sum(float(q["time"]) for q in queries), slowest)
        )
        return response

    for _ in range(cycles):
        redirect = measured("next", lambda: client.get(f"/batches/{batch_id}/next/"))
        if redirect.status_code != 302:
            break
        location = redirect["Location"]
        measured("item", lambda location=location: client.get(location))
        measured(
            "answer",
            lambda location=location: client.post(f"{location}answer/", {"answer": "retained"}),
        )
    current = None
    for _ in range(cycles):
        if current is None:
            page = client.get(f"/batches/{batch_id}/next/")
            if page.status_code != 302:
                break
            current = page["Location"]
        answer = measured(
            "answer_htmx",
            lambda current=current: client.post(
                f"{current}answer/", {"answer": "retained"}, HTTP_HX_REQUEST="true"
            ),
        )
        current = answer.get("HX-Push-Url")
        preload = PRELOAD_PATTERN.search(answer.content.decode())
        if preload:
            image_url = preload.group(1)
            measured("image", lambda url=image_url: client.get(url)).close()
        if current is None:
            break
    return {step: _profile_summary(rows) for step, rows in per_step.items() if rows}


def _profile_summary(rows) -> dict:
    counts = sorted({count for count, *_ in rows})
    slowest = max((row[3] for row in rows), key=lambda q: float(q["time"]), default=None)
    return {
        "queries": counts[-1] if counts else None,
        "queries_seen": counts,
        "request_ms_median": _round(percentile([row[1] for row in rows], 50)),
        "sql_ms_median": _round(percentile([row[2] for row in rows], 50)),
        "slowest_query_ms": _round(1000 * float(slowest["time"])) if slowest else None,
        "slowest_query": re.sub(r"\s+", " ", slowest["sql"])[:300] if slowest else None,
    }


# --- one size, and the whole run ----------------------------------------------------------


def size_run(*, label: str, n_items: int, env, workdir: Path, on_postgres: bool, args) -> dict:
    log(f"[{label}] seeding N={n_items:,} items, K={args.annotators} annotators, k=2 batch")
    seeded = study_seed(
        label=label, n_items=n_items, n_annotators=args.annotators, media_root=workdir / "media"
    )
    log(f"[{label}] seeded: " + ", ".join(f"{k} {v:.1f} s" for k, v in seeded.seconds.items()))
    with gunicorn_server(env, workdir, args.workers, args.threads) as (base_url, server, access):
        log(
            f"[{label}] gunicorn on {base_url} ({args.workers} workers x {args.threads} threads); "
            f"{args.annotators} annotators log in, {args.warmup} warm-up cycles, then "
            f"{args.cycles} cycles each (at most {args.max_seconds} s)"
        )
        # Repeated timed loops on the same server and study: each run's annotators log in
        # afresh and take the next items of their queues.
        loads = []
        for run in range(args.repeats):
            loads.append(
                load_run(
                    base_url=base_url,
                    server=server,
                    access_path=access,
                    seeded=seeded,
                    on_postgres=on_postgres,
                    args=args,
                )
            )
            pooled = loads[-1]["steps"]["pooled"]
            log(
                f"[{label}] run {run + 1}/{args.repeats}: pooled p50 {pooled['p50_ms']} "
                f"p95 {pooled['p95_ms']} p99 {pooled['p99_ms']} ms"
            )
        load = loads[0]
    for step in ("next", "next_redirect", "item_page", "answer", "image", "pooled"):
        s = load["steps"][step]
        log(
            f"[{label}] {step:13s} n={s['n']:5d} p50 {s['p50_ms']} ms  p95 {s['p95_ms']} ms  "
            f"p99 {s['p99_ms']} ms  max {s['max_ms']} ms"
        )
    for step, s in load["server_steps"].items():
        log(
            f"[{label}] server {step:13s} n={s['n']:5d} p50 {s['p50_ms']} ms  p95 {s['p95_ms']} "
            f"ms  p99 {s['p99_ms']} ms  max {s['max_ms']} ms"
        )
    log(
        f"[{label}] {load['cycles']} cycles in {load['seconds']} s = {load['cycles_per_s']} "
        f"cycles/s; CPU s: {load['cpu_seconds']} = ms per cycle {load['cpu_ms_per_cycle']}; "
        f"errors: {len(load['errors'])}"
    )
    for error in load["errors"][:5]:
        log(f"[{label}]   {error}")
    profile = query_profile(
        batch_id=seeded.batch_id, username=seeded.usernames[0], cycles=args.profile_cycles
    )
    for step, p in profile.items():
        log(
            f"[{label}] queries {step:11s} {p['queries']} (seen {p['queries_seen']}); alone "
            f"{p['request_ms_median']} ms, SQL {p['sql_ms_median']} ms; slowest "
            f"{p['slowest_query_ms']} ms: {(p['slowest_query'] or '')[:140]}"
        )
    return {
        "n_items": n_items,
        "seed_seconds": {k: round(v, 2) for k, v in seeded.seconds.items()},
        "load": load,
        "runs": [
            {
                **{f"pooled_{k}": v for k, v in run["steps"]["pooled"].items() if k != "n"},
                "cycles_per_s": run["cycles_per_s"],
                "errors": len(run["errors"]),
            }
            for run in loads
        ],
        "queries": profile,
    }


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: large N 10,000 and 20 cycles per annotator"
    )
    parser.add_argument(
        "--database-url",
        default=DEFAULT_DATABASE_URL,
        help="DROPPED and recreated; 'sqlite' for a file in the temporary folder",
    )
    parser.add_argument(
        "--keep-db", action="store_true", help="do not drop the database at the end"
    )
    parser.add_argument("--annotators", type=int, default=24, help="K concurrent annotators")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers (as serve.sh)")
    parser.add_argument("--threads", type=int, default=2, help="gunicorn threads per worker")
    parser.add_argument("--small", type=int, default=None, help="default 4,000; 1,000 quick")
    parser.add_argument("--large", type=int, default=None, help="default 100,000; 10,000 quick")
    parser.add_argument(
        "--cycles", type=int, default=None, help="per annotator; default 60, 20 quick"
    )
    parser.add_argument("--warmup", type=int, default=3, help="unrecorded cycles per annotator")
    parser.add_argument(
        "--think-ms", type=float, default=1500, help="mean pause after each answer (0: none)"
    )
    parser.add_argument(
        "--think-dist",
        choices=["exp", "uniform", "fixed"],
        default="exp",
        help="how pauses vary around --think-ms (see AnnotatorThread.think_time)",
    )
    parser.add_argument(
        "--flow",
        choices=["plain", "htmx"],
        default="htmx",
        help="plain: GET next (redirect) + item page + POST answer per cycle (no JavaScript); "
        "htmx: the browser's flow, one POST that answers and returns the next item, plus its image",
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=None,
        help="time bound of each size's timed loop; default 300, 90 quick",
    )
    parser.add_argument("--profile-cycles", type=int, default=5)
    parser.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="timed loops per size (each after its own warm-up cycles); default 5, 3 quick",
    )
    args = parser.parse_args(argv)
    args.repeats = args.repeats or (3 if args.quick else 5)
    # Every run takes new items from each annotator's queue: the small study must hold them all.
    args.small = args.small or (1_000 if args.quick else 4_000)
    args.large = args.large or (10_000 if args.quick else 100_000)
    args.cycles = args.cycles or (20 if args.quick else 60)
    args.max_seconds = args.max_seconds or (90 if args.quick else 300)
    per_annotator = 2 * args.small // args.annotators
    if args.repeats * (args.warmup + args.cycles) + 2 * args.profile_cycles > per_annotator:
        parser.error(
            f"at N={args.small} each annotator has only {per_annotator} items: "
            "lower --repeats/--cycles/--warmup/--profile-cycles or raise --small"
        )
    return args


def final_record(args, results: dict, vendor: str, load_avg: tuple) -> dict:
    small, large = results["small"], results["large"]
    pooled = {label: r["load"]["steps"]["pooled"] for label, r in results.items()}
    queries = {
        label: {step: p["queries"] for step, p in r["queries"].items()}
        for label, r in results.items()
    }
    measured = all(pooled[label]["n"] for label in pooled)
    p95_ratio = pooled["large"]["p95_ms"] / pooled["small"]["p95_ms"] if measured else None
    p99 = max(pooled["small"]["p99_ms"], pooled["large"]["p99_ms"]) if measured else None
    record = {
        # The headline and per-step figures are the first run's; runs_* (paired_runs_summary)
        # give median [min–max] over all runs.
        "first_run_only": ["p95_ms_small", "p95_ms_large", "p99_ms", "targets", "steps_*"],
        "p95_ms_small": pooled["small"]["p95_ms"],
        "p95_ms_large": pooled["large"]["p95_ms"],
        "p99_ms": p99,
        "p99_ms_is": "max over both sizes of the p99 of all timed steps pooled",
        "queries_per_request_small": queries["small"],
        "queries_per_request_large": queries["large"],
        "n_small": small["n_items"],
        "n_large": large["n_items"],
        "targets": {
            "queries_constant_in_n": queries["small"] == queries["large"],
            "p95_large_over_small": _round(p95_ratio),
            "p95_within_1_3x": measured and p95_ratio <= 1.3,
            "p99_under_100_ms": measured and p99 < 100,
        },
        "k_annotators": args.annotators,
        "workers": args.workers,
        "threads": args.threads,
        "cycles_per_annotator": args.cycles,
        "think_ms": args.think_ms,
        "think_dist": args.think_dist if args.think_ms else None,
        "flow": args.flow,
        "quick": args.quick,
        "cpu_count": os.cpu_count(),
        "load_average_before_after": load_avg,
        "db_vendor": vendor,
        "python": platform.python_version(),
    }
    record.update(paired_runs_summary(results))
    for label, result in results.items():
        load = result["load"]
        record[f"steps_{label}"] = {
            step: {k: v for k, v in s.items() if k != "n"} | {"n": s["n"]}
            for step, s in load["steps"].items()
        }
        record[f"server_steps_{label}"] = load["server_steps"]
        record[f"cycles_per_s_{label}"] = load["cycles_per_s"]
        record[f"cpu_seconds_{label}"] = load["cpu_seconds"]
        record[f"cpu_ms_per_cycle_{label}"] = load["cpu_ms_per_cycle"]
        record[f"errors_{label}"] = len(load["errors"])
        record[f"seed_seconds_{label}"] = result["seed_seconds"]
        record[f"single_request_ms_{label}"] = {
            step: {
                "request": p["request_ms_median"],
                "sql": p["sql_ms_median"],
                "slowest_query_ms": p["slowest_query_ms"],
            }
            for step, p in result["queries"].items()
        }
    return record


def paired_runs_summary(results: dict) -> dict:
    """median [min–max] over the repeated runs; run i of the large study is paired with run i
    of the small one for the p95 ratio."""
    small, large = results["small"]["runs"], results["large"]["runs"]
    per_run = []
    for small_run, large_run in zip(small, large, strict=False):
        sample = {f"{k}_small": v for k, v in small_run.items()}
        sample |= {f"{k}_large": v for k, v in large_run.items()}
        if small_run["pooled_p95_ms"] and large_run["pooled_p95_ms"]:
            sample["p95_large_over_small"] = large_run["pooled_p95_ms"] / small_run["pooled_p95_ms"]
        per_run.append(sample)
    keys = list(dict.fromkeys(key for sample in per_run for key in sample))
    return {
        "runs": len(per_run),
        **{
            f"runs_{key}": spread([s[key] for s in per_run if isinstance(s.get(key), int | float)])
            for key in keys
        },
    }


def _interrupt(signum, frame):
    raise KeyboardInterrupt  # so that a SIGTERM cleans up like Ctrl-C


def main(argv=None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)
    workdir = Path(tempfile.mkdtemp(prefix="acrb-annotation-load-"))
    database_url = database_url_resolved(args.database_url, workdir)
    reset = False
    try:
        log(f"temporary folder {workdir}; database {database_url} (dropped and recreated)")
        database_reset(database_url)
        reset = True
        env = app_environment(database_url, workdir)
        migrate(env)
        django_setup(env)
        from django.db import connection, connections

        vendor = connection.vendor
        load_before = os.getloadavg()
        results = {}
        for label, n_items in (("small", args.small), ("large", args.large)):
            results[label] = size_run(
                label=label,
                n_items=n_items,
                env=env,
                workdir=workdir,
                on_postgres=vendor == "postgresql",
                args=args,
            )
        record = final_record(
            args,
            results,
            vendor,
            (tuple(round(x, 2) for x in load_before), tuple(round(x, 2) for x in os.getloadavg())),
        )
        connections.close_all()
        emit(
            {
                "benchmark": "annotation_load",
                "load_average_before": round(load_before[0], 2),
                **record,
                **machine(["django", "gunicorn", "psycopg", "requests"]),
            }
        )
        return 1 if record["errors_small"] or record["errors_large"] else 0
    finally:
        if "django" in sys.modules:
            from django.db import connections

            connections.close_all()
        if reset and not args.keep_db:
            with contextlib.suppress(Exception):
                database_drop(database_url)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
