"""The annotator's loop measured with the same client as Label Studio (issue 36 §8). Prints
progress, then one JSON line.

The client is ``shared/tools/loadloop/loop.py`` (``--loop``), the one that measured Label Studio
1.23.2 on this kind of machine (7.7 cycles/s at saturation, 218–250 ms of server and PostgreSQL
CPU a cycle, p99 1.4–1.6 s at human pace). This script only prepares our side and runs it with
the command line its README gives for this project:

1. a study of ``--items`` items (default 1,000), ``--annotators`` accounts (24) and a k=2 batch,
   seeded as ``bench/annotation_load.py`` seeds (a new study for each run, so every run starts
   with full queues);
2. the app under gunicorn (4 workers × 2 threads, DEBUG off, PostgreSQL, keep-alive), each
   annotator logged in; the tokens file holds its session and CSRF cookies;
3. the client, for each path and pace:
   - ``plain``, the path without JavaScript, exactly as the README: GET next (its redirect
     followed to the item page), then the answer's form POST (its redirect not followed);
   - ``htmx``, the browser's path: the same two steps sent as htmx sends them (``HX-Request``),
     so next redirects to the item's fragment and the answer returns the
     next item's fragment. The client still asks next every cycle, which a browser does not:
     it measures more work than a browser causes.
   Each at saturation (``--think-ms 0``) and at human pace (``--think-ms 1500``);
4. overlap: no item may hold more answers than the batch's k, whatever the client reports.

Each path and pace runs ``--repeats`` times (3), interleaved; figures are median [min–max].

Run: .venv/bin/python bench/loadloop.py [--quick] [--loop ../shared/tools/loadloop/loop.py]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests
from annotation_load import (
    PASSWORD,
    PYTHON,
    ROOT,
    app_environment,
    database_drop,
    database_reset,
    django_setup,
    gunicorn_server,
    migrate,
    study_seed,
)
from harness import emit, machine, spread

DEFAULT_LOOP = ROOT.parent / "shared" / "tools" / "loadloop" / "loop.py"
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/acrb_loadloop"
# One CSRF secret for every annotator on the htmx path: the client has one free header, which
# carries HX-Request there, so the token travels as the form field (Django accepts the secret).
SHARED_CSRF = "loadloopbenchcsrfsecret000000000"
LABEL_STUDIO = {
    "cycles_per_s_saturation": [7.7, 6.9],
    "server_and_postgres_cpu_ms_per_cycle": [218, 250],
    "p99_ms_human_pace": [1400, 1600],
    "source": "issue 36 §8: Label Studio 1.23.2, gunicorn 4×2, PostgreSQL, 24 annotators, "
    "1,000 items, the same client",
}


def log(message: str) -> None:
    print(f"[loadloop {time.strftime('%H:%M:%S')}] {message}", flush=True)


def logins(base_url: str, usernames: list[str], *, shared_csrf: bool) -> list[tuple[str, str]]:
    """(cookie header, CSRF token) of each annotator, logged in through the real login page."""
    tokens = []
    for name in usernames:
        session = requests.Session()
        if shared_csrf:
            session.cookies.set("csrftoken", SHARED_CSRF, domain="127.0.0.1")
        session.get(f"{base_url}/accounts/login/", timeout=30).raise_for_status()
        csrf = session.cookies["csrftoken"]
        response = session.post(
            f"{base_url}/accounts/login/",
            data={"username": name, "password": PASSWORD, "csrfmiddlewaretoken": csrf},
            allow_redirects=False,
            timeout=30,
        )
        if response.status_code != 302:
            raise RuntimeError(f"login of {name} failed with HTTP {response.status_code}")
        # Logging in rotates the CSRF secret: the new one is the cookie's, unless shared.
        csrf = SHARED_CSRF if shared_csrf else session.cookies["csrftoken"]
        cookie = f"sessionid={session.cookies['sessionid']}; csrftoken={csrf}"
        tokens.append((cookie, csrf))
    return tokens


def loop_command(
    args,
    *,
    path: str,
    base_url: str,
    batch_id: int,
    tokens_file: Path,
    server_pid,
    think_ms: float,
    out: Path,
) -> list[str]:
    common = [
        str(PYTHON), str(args.loop), "--base-url", base_url,
        "--auth-header", "Cookie: {token}", "--tokens-file", str(tokens_file),
        "--project", str(batch_id),
        "--next-path", "/batches/{project}/next/", "--next-follow-redirects",
        "--id-from-url", r"/assignments/(\d+)/$",
        "--submit-path", "/assignments/{item_id}/answer/", "--submit-form",
        "--choices", "retained,erased,substituted", "--ok-max", "400",
        "-k", str(args.annotators), "--iterations", str(args.iterations),
        "--warmup", str(args.warmup), "--max-seconds", str(args.max_seconds),
        "--server-pid", str(server_pid), "--server-tree", "--postgres-cpu",
        "--think-ms", str(think_ms), "--out", str(out),
    ]  # fmt: skip
    if path == "plain":
        return [*common, "--header2", "X-CSRFToken: {token2}", "--submit-body", "answer={choice}"]
    return [
        *common,
        "--header2", "HX-Request: true",
        "--submit-body", f"answer={{choice}}&csrfmiddlewaretoken={SHARED_CSRF}",
    ]  # fmt: skip


def overlap_check(batch_id: int) -> dict:
    """Answers per item against the batch's k (the client sees only its own side)."""
    from django.db.models import Count

    from annotations.models import Annotation, Batch

    batch = Batch.objects.get(pk=batch_id)
    counts = (
        Annotation.objects.filter(assignment__batch=batch)
        .values("assignment__item")
        .annotate(n=Count("id"))
        .values_list("n", flat=True)
    )
    most = max(counts, default=0)
    return {"overlap_k": batch.overlap_k, "most_answers_on_one_item": most,
            "over_overlap": most > (batch.overlap_k or 0)}  # fmt: skip


def one_run(args, *, label: str, path: str, think_ms: float, env, workdir: Path) -> dict:
    seeded = study_seed(
        label=label, n_items=args.items, n_annotators=args.annotators,
        media_root=workdir / "media",
    )  # fmt: skip
    with gunicorn_server(env, workdir, args.workers, args.threads) as (base_url, server, _):
        tokens = logins(base_url, seeded.usernames, shared_csrf=path == "htmx")
        tokens_file = workdir / f"tokens-{label}.txt"
        tokens_file.write_text("".join(f"{cookie}\t{csrf}\n" for cookie, csrf in tokens))
        out = workdir / f"loop-{label}.json"
        command = loop_command(
            args, path=path, base_url=base_url, batch_id=seeded.batch_id,
            tokens_file=tokens_file, server_pid=server.pid, think_ms=think_ms, out=out,
        )  # fmt: skip
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=args.max_seconds + 120
        )
        if done.returncode:
            raise RuntimeError(f"the client failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    summary = json.loads(out.read_text())["summary"]
    summary["overlap"] = overlap_check(seeded.batch_id)
    return summary


def run_figures(summary: dict) -> dict:
    """The figures a reader compares with Label Studio's, from one client summary."""
    cpu = [summary.get("server_cpu_ms_per_cycle_all"), summary.get("postgres_cpu_ms_per_cycle_all")]
    return {
        "cycles_per_s": summary.get("cycles_per_s"),
        "next_p50_ms": summary["next"]["p50_ms"],
        "next_p99_ms": summary["next"]["p99_ms"],
        "submit_p50_ms": summary["submit"]["p50_ms"],
        "submit_p99_ms": summary["submit"]["p99_ms"],
        "statuses": {
            "next": summary["next"]["status_counts"],
            "submit": summary["submit"]["status_counts"],
        },  # fmt: skip
        "server_cpu_ms_per_cycle": cpu[0],
        "postgres_cpu_ms_per_cycle": cpu[1],
        "server_and_postgres_cpu_ms_per_cycle": round(sum(cpu), 1) if None not in cpu else None,
        "client_cpu_ms_per_cycle": summary.get("client_cpu_ms_per_cycle_all"),
        "items_submitted_more_than_once": summary.get("items_submitted_more_than_once"),
        "overlap": summary["overlap"],
        "loadavg_end": summary.get("loadavg_end"),
    }


SPREAD_KEYS = (
    "cycles_per_s", "next_p50_ms", "next_p99_ms", "submit_p50_ms", "submit_p99_ms",
    "server_cpu_ms_per_cycle", "postgres_cpu_ms_per_cycle",
    "server_and_postgres_cpu_ms_per_cycle", "client_cpu_ms_per_cycle",
)  # fmt: skip


def summary_of(figures: list[dict]) -> dict:
    """Median [min, max] of each figure over the repeats."""
    return {key: spread([f[key] for f in figures if f[key] is not None]) for key in SPREAD_KEYS}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loop", type=Path, default=DEFAULT_LOOP, help="the shared client")
    parser.add_argument("--quick", action="store_true", help="10 cycles per annotator, one pace")
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL, help="DROPPED, recreated")
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--annotators", type=int, default=24)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=None, help="default 30, 10 quick")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--max-seconds", type=float, default=300)
    parser.add_argument("--repeats", type=int, default=None, help="default 3, 1 quick")
    parser.add_argument("--paths", default="plain,htmx", help="plain, htmx or both")
    parser.add_argument("--paces", default=None, help="think times in ms; default 0,1500 (0 quick)")
    args = parser.parse_args(argv)
    args.iterations = args.iterations or (10 if args.quick else 30)
    args.repeats = args.repeats or (1 if args.quick else 3)
    args.paces = [float(p) for p in (args.paces or ("0" if args.quick else "0,1500")).split(",")]
    args.paths = [p for p in args.paths.split(",") if p]
    if set(args.paths) - {"plain", "htmx"}:
        parser.error("--paths: plain and/or htmx")
    if not args.loop.is_file():
        parser.error(f"--loop: no client at {args.loop} (shared/tools/loadloop/loop.py)")
    per_annotator = 2 * args.items // args.annotators
    if args.iterations + args.warmup > per_annotator:
        parser.error(
            f"each annotator has {per_annotator} items: fewer --iterations or more --items"
        )
    return args


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)
    workdir = Path(tempfile.mkdtemp(prefix="acrb-loadloop-"))
    reset = False
    try:
        database_reset(args.database_url)
        reset = True
        env = app_environment(args.database_url, workdir)
        migrate(env)
        django_setup(env)
        load_before = os.getloadavg()[0]
        runs: dict[str, list[dict]] = {}
        # Repeats interleave the four runs, so a slow spell of the machine hits them alike.
        for repeat in range(args.repeats):
            for path in args.paths:
                for think_ms in args.paces:
                    label = f"{path}_{'saturation' if think_ms == 0 else f'think{think_ms:g}'}"
                    log(f"{label} ({repeat + 1}/{args.repeats}): {args.annotators} annotators")
                    figures = run_figures(
                        one_run(args, label=f"{label}{repeat}", path=path, think_ms=think_ms,
                                env=env, workdir=workdir)
                    )  # fmt: skip
                    runs.setdefault(label, []).append(figures)
                    log(f"{label}: {json.dumps(figures)}")
        summary = {label: summary_of(figures) for label, figures in runs.items()}
        saturated = {k: v for k, v in summary.items() if k.endswith("saturation")}
        paced = {k: v for k, v in summary.items() if not k.endswith("saturation")}
        ls_best = max(LABEL_STUDIO["cycles_per_s_saturation"])
        targets = {
            "x_label_studio_cycles_per_s": {
                label: round(r["cycles_per_s"]["median"] / ls_best, 1)
                for label, r in saturated.items()
            },
            "at_least_8x": all(
                r["cycles_per_s"]["median"] >= 8 * ls_best for r in saturated.values()
            ),
            "p99_under_100_ms_at_human_pace": all(
                r["next_p99_ms"]["median"] < 100 and r["submit_p99_ms"]["median"] < 100
                for r in paced.values()
            ) if paced else None,
            "no_answer_over_overlap": not any(
                f["overlap"]["over_overlap"] for figures in runs.values() for f in figures
            ),
        }  # fmt: skip
        emit({
            "benchmark": "loadloop",
            "summary": summary,
            "targets": targets,
            "runs": runs,
            "label_studio": LABEL_STUDIO,
            "items": args.items, "annotators": args.annotators,
            "gunicorn": f"{args.workers} workers x {args.threads} threads",
            "iterations": args.iterations, "warmup": args.warmup, "repeats": args.repeats,
            "load_average_before": round(load_before, 2),
            **machine(["django", "gunicorn", "psycopg", "httpx"]),
        })  # fmt: skip
        refused = [label for label, figures in runs.items() for f in figures
                   if set(f["statuses"]["submit"]) - {"302", "200"}]  # fmt: skip
        if refused:
            log(f"answers refused in {', '.join(refused)}: see statuses")
        return 0 if targets["no_answer_over_overlap"] and not refused else 1
    finally:
        if "django" in sys.modules:
            from django.db import connections

            connections.close_all()
        if reset:
            with contextlib.suppress(Exception):
                database_drop(args.database_url)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
