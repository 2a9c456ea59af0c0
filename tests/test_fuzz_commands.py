"""No traceback from any command (issue 20 item 8): every management command of the app, run
as from the command line (``run_from_argv``), with hostile arguments built from its own parser:
Latin-1 files (YAML, CSV, JSON), JSON nested 100,000 deep, ``--out`` at an existing file or in
a missing folder, a non-UTF-8 ``--study`` (as Python decodes such argv bytes). Each run ends
normally or with one line on stderr and exit status 1 or 2; never a traceback.

Every numeric option of every command is also given, one at a time, each shape of a bad
number (issue 36 §2): negative, zero, huge (99999999999999 once asked numpy for 2 PiB), past
64 bits and not a number. The parser itself refuses all but zero, with one line naming the
option (exit status 2): bounds live in the argument parsers (``annotations.management.helpers
.bounded_int``), not in numpy's or the database's error messages.

Runs in the normal suite (CI) in about a minute.
"""

from __future__ import annotations

import contextlib
import io
import signal
from pathlib import Path

import pytest
from django.core.management import CommandError, get_commands, load_command_class

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
OUTPUTS = {"out", "rephrase_out", "json_path"}
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


# The shapes of a bad number, each given to one numeric option at a time; all but zero must be
# refused by the parser.
NUMBER_SHAPES = {
    "negative": ("-5", "-5"),
    "zero": ("0", "0"),
    "huge": ("99999999999999", "1e14"),
    "past-64-bits": ("9" * 30, "1e400"),
    "not-a-number": ("many", "nan"),
}
PARSER_BOUNDS_PENDING: set[str] = set()  # commands whose numbers are not bounded yet: none
# Commands that build a whole demo: a zero they accept is parsed, not run.
SLOW_TO_RUN = {"seed_demo", "seed_pipeline_demo"}


def _numeric(action) -> str | None:
    """ "int" or "float" for a numeric option (a bounded type or a bare one), else None."""
    kind = getattr(action.type, "kind", action.type)
    return {int: "int", float: "float"}.get(kind)


def _plausible(action) -> str:
    """A number the option takes: its default, else one inside its bounds."""
    if isinstance(action.default, (int, float)) and not isinstance(action.default, bool):
        return str(action.default)
    low = getattr(action.type, "low", None)
    if low is None:
        return "2" if _numeric(action) == "int" else "0.5"
    if action.type.low_open:
        return str(min(action.type.high, low + (1 if action.type.kind is int else 0.5)))
    return str(max(low, min(action.type.high, 2)))


def numeric_actions(parser) -> list:
    return [
        a
        for a in parser._actions
        if a.dest not in SKIPPED_DESTS and a.nargs != 0 and not a.choices and _numeric(a)
    ]


def scenarios(parser, files, study: str, numbers: dict | None = None) -> list[list[str]]:
    """Argument lists: each a different hostile input, the other options plausible.

    ``numbers`` ({dest: text}) replaces the plausible value of those numeric options."""
    actions = [a for a in parser._actions if a.dest not in SKIPPED_DESTS]
    kinds = (
        [
            *("latin1", "deep", "existing-out", "missing-out", "non-utf8"),
            "bad-address",  # spaces and brackets where a study address goes (issue 36 §1)
        ]
        if not numbers
        else ["n"]
    )
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
            elif dest in (numbers or {}):
                value = numbers[dest]
            elif _numeric(action):
                value = _plausible(action)
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
            failures += _failures(name, app, argv)
    assert not failures, f"{len(failures)} tracebacks:\n" + "\n".join(failures)


@pytest.mark.django_db(transaction=True)
def test_every_numeric_option_refuses_bad_numbers_in_its_parser(imported_study, files, monkeypatch):
    monkeypatch.setenv("ACRB_OFFLINE_ONLY", "1")
    failures, options = [], 0
    for name, app in app_commands():
        parser = load_command_class(app, name).create_parser("manage.py", name)
        for action in numeric_actions(parser):
            options += 1
            option = action.option_strings[0] if action.option_strings else action.dest
            for shape, (as_int, as_float) in NUMBER_SHAPES.items():
                text = as_int if _numeric(action) == "int" else as_float
                [argv] = scenarios(parser, files, imported_study.slug, {action.dest: text})
                if shape == "zero" and name in SLOW_TO_RUN:
                    failures += _parse_failures(parser, name, argv)
                    continue
                # A seed may be as large as a stored one (a batch's is 64 bits): "huge" is in range.
                in_range = shape == "huge" and getattr(action.type, "high", 0) >= 99999999999999
                strict = shape != "zero" and not in_range and name not in PARSER_BOUNDS_PENDING
                failures += _failures(name, app, argv, refused_as=option if strict else None)
    assert options >= 50  # every numeric option of every command is fuzzed
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures)


def _parse_failures(parser, name: str, argv: list[str]) -> list[str]:
    """Parsed only: a zero the parser takes would start a demo build (15 s each)."""
    try:
        parser.parse_args(argv)
    except CommandError as refused:  # what the parser says when not run from the command line
        if "\n" in str(refused).strip():
            return [f"{name} {_shown(argv)}: more than one line: {str(refused)[:200]}"]
    return []


def _failures(name: str, app: str, argv: list[str], refused_as: str | None = None) -> list[str]:
    """What is wrong with one run: a traceback, an odd exit status, numpy's wording, or (with
    ``refused_as``) a value the parser let through or refused in more than one line."""
    try:
        status, stderr = _run(name, app, argv)
    except Exception as exc:  # noqa: BLE001 - the traceback a user would have seen
        return [f"{name} {_shown(argv)}: {type(exc).__name__}: {str(exc)[:150]}"]
    if "Traceback" in stderr or status not in (0, 1, 2, None):
        return [f"{name} {_shown(argv)}: exit {status}: {stderr[-200:]}"]
    if any(words in stderr for words in NUMPY_WORDS):
        return [f"{name} {_shown(argv)}: numpy's wording: {stderr[-200:]}"]
    if refused_as is not None:
        last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
        if status != 2 or f"argument {refused_as}" not in last:
            return [f"{name} {_shown(argv)}: not refused by the parser (exit {status}): {last}"]
    return []


# numpy's own messages, which once reached the user ("--sample-size -1").
NUMPY_WORDS = ("negative dimensions", "Unable to allocate", "high <= 0", "low >= high")


def _shown(argv: list[str]) -> str:
    return " ".join(Path(a).name if "/" in a else a[:20] for a in argv)[:160]
