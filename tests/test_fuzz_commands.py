"""No traceback from any command (issue 20 item 8): every management command of the app, run
as from the command line (``run_from_argv``), with hostile arguments built from its own parser:
Latin-1 files (YAML, CSV, JSON), JSON nested 100,000 deep, ``--out`` at an existing file or in
a missing folder, a non-UTF-8 ``--study`` (as Python decodes such argv bytes), integers past
64 bits and negative ones. Each run ends normally or with one line on stderr and exit status
1 or 2; never a traceback.

Runs in the normal suite (CI) in well under a minute.
"""

from __future__ import annotations

import contextlib
import io
import signal
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class

APPS = ("annotations", "generation", "scoring")
# What argparse leaves in sys.argv for the bytes b"\xff\xfe" (surrogateescape).
NON_UTF8 = b"st\xff\xfe".decode("utf-8", "surrogateescape")
DEEP = 100_000
# Options whose value names a file or folder to read, or one to write.
INPUTS = {
    "config",
    "taxonomy",
    "base",
    "protocol",
    "answers",
    "manifest",
    "files",
    "csv_file",
    "folder",
    "template_file",
    "sources",
    "rephrase_cache",
    "names",
    "reference",
}
OUTPUTS = {"out", "rephrase_out"}
SKIPPED_DESTS = {
    "help",
    "version",
    "verbosity",
    "settings",
    "pythonpath",
    "traceback",
    "no_color",
    "force_color",
    "skip_checks",
}
SECONDS_PER_RUN = 30


def app_commands() -> list[tuple[str, str]]:
    return sorted((n, a) for n, a in get_commands().items() if a.split(".")[0] in APPS)


@pytest.fixture
def files(tmp_path):
    latin1 = "name: K\u00f6ln\nitem_id,annotator\nK\u00f6ln,\u00e9\n".encode("latin-1")
    made = {}
    for suffix in ("yaml", "csv", "json", "jsonl", "txt"):
        made[f"latin1.{suffix}"] = tmp_path / f"latin1.{suffix}"
        made[f"latin1.{suffix}"].write_bytes(latin1)
        made[f"deep.{suffix}"] = tmp_path / f"deep.{suffix}"
        made[f"deep.{suffix}"].write_text("[" * DEEP + "]" * DEEP)
    made["existing"] = tmp_path / "existing.html"
    made["existing"].write_text("not a folder")
    made["missing"] = tmp_path / "no" / "such" / "folder" / "out.csv"
    return made


def _suffix(dest: str) -> str:
    return {"config": "yaml", "csv_file": "csv", "names": "txt", "manifest": "jsonl"}.get(
        dest, "json"
    )


def scenarios(parser, files, study: str) -> list[list[str]]:
    """Argument lists: each a different hostile input, the other options plausible."""
    actions = [a for a in parser._actions if a.dest not in SKIPPED_DESTS]
    kinds = [
        *("latin1", "deep", "existing-out", "missing-out", "non-utf8", "huge-int", "negative"),
        "bad-address",  # spaces and brackets where a study address goes (issue 36 §1)
    ]
    runs = []
    for kind in kinds:
        argv = []
        for action in actions:
            if action.nargs == 0:  # a flag
                continue
            dest = action.dest
            if dest in INPUTS:
                which = "deep" if kind == "deep" else "latin1"
                value = str(files[f"{which}.{_suffix(dest)}"])
            elif dest in OUTPUTS:
                value = str(files["missing" if kind == "missing-out" else "existing"])
            elif action.choices:
                value = str(list(action.choices)[0])
            elif action.type is int:
                value = {"huge-int": "9" * 30, "negative": "-5"}.get(kind, "2")
            elif action.type is float:
                value = {"huge-int": "1e400", "negative": "-5"}.get(kind, "0.5")
            else:
                value = {"non-utf8": NON_UTF8, "bad-address": "a b (x)"}.get(kind, study)
            argv.extend([value] if not action.option_strings else [action.option_strings[0], value])
        runs.append(argv)
    return runs


class _Timeout(Exception):
    pass


def _run(name: str, app: str, argv: list[str]):
    """(exit status, stderr) of ``manage.py name argv``, in this process."""
    command = load_command_class(app, name)
    stderr, stdout = io.StringIO(), io.StringIO()

    def stop(*_):
        raise _Timeout(f"{name} ran past {SECONDS_PER_RUN} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(SECONDS_PER_RUN)
    try:
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stdout):
            command.run_from_argv(["manage.py", name, *argv])
        return 0, stderr.getvalue()
    except SystemExit as exit_:
        return exit_.code, stderr.getvalue()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.django_db(transaction=True)
def test_no_command_prints_a_traceback(imported_study, files, monkeypatch):
    monkeypatch.setenv("ACRB_OFFLINE_ONLY", "1")
    failures = []
    assert len(app_commands()) >= 20  # every command of the three apps is found
    for name, app in app_commands():
        parser = load_command_class(app, name).create_parser("manage.py", name)
        for argv in scenarios(parser, files, imported_study.slug):
            try:
                status, stderr = _run(name, app, argv)
            except Exception as exc:  # noqa: BLE001 - the traceback a user would have seen
                failures.append(f"{name} {_shown(argv)}: {type(exc).__name__}: {str(exc)[:150]}")
                continue
            if "Traceback" in stderr or status not in (0, 1, 2, None):
                failures.append(f"{name} {_shown(argv)}: exit {status}: {stderr[-200:]}")
    assert not failures, f"{len(failures)} tracebacks:\n" + "\n".join(failures)


def _shown(argv: list[str]) -> str:
    return " ".join(Path(a).name if "/" in a else a[:20] for a in argv)[:160]
