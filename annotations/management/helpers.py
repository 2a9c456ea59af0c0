"""Helpers of management commands, shared by every app's commands (annotations is the
bottom layer; docs/architecture.md)."""

import argparse
import math
from pathlib import Path
from urllib.parse import urlsplit

import yaml
from django.core.management import base
from django.core.management.base import CommandError
from django.db import DataError, OperationalError, ProgrammingError

from annotations.common.bounds import MAX_RESAMPLES, MAX_SAMPLE_SIZE, MAX_SEED
from annotations.models import Study

# What bad input raises wherever a command reads it: a file that is not UTF-8, JSON or YAML
# nested past Python's recursion limit, a path that is a file where a folder is wanted (or
# missing), a number out of range, a value the database refuses. One line each, never a
# traceback (docs/deployment.md#security); --traceback shows it for a bug report.
INPUT_ERRORS = (
    UnicodeError,
    RecursionError,
    OSError,
    ValueError,
    OverflowError,
    DataError,
    yaml.YAMLError,
)


class BaseCommand(base.BaseCommand):
    """The base of every management command of the app: arguments that are not UTF-8 text
    and the input errors above end as one ``CommandError`` line (exit status 1)."""

    def execute(self, *args, **options):
        for name, value in [*(("argument", a) for a in args), *options.items()]:
            for text in value if isinstance(value, (list, tuple)) else [value]:
                if isinstance(text, str) and not _is_utf8(text):
                    shown = text.encode("utf-8", "surrogateescape")
                    raise CommandError(f"{_option(name)}: {shown!r} is not UTF-8 text")
        try:
            return super().execute(*args, **options)
        except CommandError:
            raise
        except INPUT_ERRORS as exc:
            if options.get("traceback"):
                raise
            raise CommandError(input_error_line(exc)) from exc
        except (OperationalError, ProgrammingError) as exc:
            # A database that is not reachable or not migrated yet; other SQL errors are bugs.
            missing = isinstance(exc, OperationalError) or "does not exist" in str(exc)
            if options.get("traceback") or not missing:
                raise
            raise CommandError(database_error_line(exc)) from exc


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _option(dest: str) -> str:
    return dest if dest == "argument" else "--" + dest.replace("_", "-")


def input_error_line(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply to read (more levels than Python's limit)"
    if isinstance(exc, UnicodeDecodeError):
        byte = exc.object[exc.start : exc.start + 1].hex()
        return f"not UTF-8 text (byte 0x{byte} at offset {exc.start}); save the file as UTF-8"
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.filename}: {exc.strerror or exc}"
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


def database_error_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:200] or type(exc).__name__
    return (
        f"the database is not ready ({text}): run `manage.py migrate` first, and check "
        "DATABASE_URL (docs/deployment.md)"
    )


def study_or_error(slug: str) -> Study:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        known = ", ".join(Study.objects.values_list("slug", flat=True)[:20]) or "none"
        raise CommandError(f"unknown study {slug!r} (known: {known})")
    return study


def file_error(file_name: str, problem) -> CommandError:
    """The error a command stops with: one line per problem, each naming the user's file.

    ``problem`` is a ManifestInvalid (every problem it found) or any text.
    """
    lines_for = getattr(problem, "lines_for", None)
    if lines_for is None:
        return CommandError(f"{file_name}: {problem}")
    lines = lines_for(file_name)
    if len(lines) == 1:
        return CommandError(lines[0])
    summary = f"{file_name}: {len(problem.errors)} problems, nothing was imported"
    return CommandError("\n".join([summary, *lines]))


def output_file_or_error(out, *, option: str = "--out") -> Path:
    """The file a command will write, checked before any work: its folder must exist and be a
    folder, and ``out`` must not be one. One line, never a traceback after minutes of computing
    (``export_metrics --out missing/dir/x.json`` once did)."""
    out = Path(out)
    parent = out.parent
    if out.is_dir():
        raise CommandError(f"{option} {out}: is a folder; name a file")
    if not parent.is_dir():
        what = "is not a folder" if parent.exists() else "does not exist"
        raise CommandError(f"{option} {out}: folder {parent} {what}")
    return out


# --- numeric options: bounds in the parser ------------------------------------------------------
# Every number a command takes is checked where it is parsed, against bounds written beside the
# option: "--resamples 99999999999999" once asked numpy for 2 PiB, "--overlap-k -5" reached the
# database's CHECK constraint, "--sample-size -1" ended with numpy's own wording. argparse turns
# ArgumentTypeError into one line, "argument --resamples: …", and exit status 2.


class Bounded:
    """An argparse ``type``: a whole number (``int``) or a finite number (``float``) from
    ``low`` to ``high``; ``low_open`` makes ``low`` itself refused ("more than 0")."""

    def __init__(self, kind: type, low, high, *, low_open: bool = False):
        self.kind, self.low, self.high, self.low_open = kind, low, high, low_open
        self.__name__ = "whole number" if kind is int else "number"  # argparse names the type

    def __call__(self, text: str):
        try:
            value = self.kind(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a {self.__name__}") from None
        if self.kind is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a finite number")
        too_low = value <= self.low if self.low_open else value < self.low
        if too_low or value > self.high:
            shown = f"{value:,}" if self.kind is int else f"{value:g}"
            raise argparse.ArgumentTypeError(f"{shown[:40]} is out of range: use {self.range}")
        return value

    @property
    def range(self) -> str:
        """The accepted range in words, for the message and for ``--help``."""
        low, high = (f"{b:,}" if self.kind is int else f"{b:g}" for b in (self.low, self.high))
        return f"more than {low} and at most {high}" if self.low_open else f"{low} to {high}"

    def __repr__(self) -> str:
        return f"Bounded({self.kind.__name__}, {self.range})"


def bounded_int(low: int, high: int) -> Bounded:
    return Bounded(int, low, high)


def bounded_float(low: float, high: float, *, low_open: bool = False) -> Bounded:
    return Bounded(float, low, high, low_open=low_open)


SEED = bounded_int(0, MAX_SEED)
RESAMPLES = bounded_int(0, MAX_RESAMPLES)
# Annotators per item: the staff batch form's bound (annotations/staff/forms.py).
OVERLAP_K = bounded_int(1, 50)
SAMPLE_SIZE = bounded_int(1, MAX_SAMPLE_SIZE)
# Seconds a command waits for its background job: at most 30 days.
TIMEOUT = bounded_float(0, 30 * 24 * 3600, low_open=True)


def http_base_url(text: str) -> str:
    """An argparse ``type``: where the app is served, an absolute http(s) URL with a host and no
    space, query or fragment. Printed links start with it, so ``javascript:alert(1)`` or a URL
    with a space would hand people a link that does something else, or nothing."""
    shown = text[:60]
    if any(c.isspace() or not c.isprintable() for c in text):
        raise argparse.ArgumentTypeError(f"{shown!r} holds a space or a control character")
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shown!r} is not a URL") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(
            f"{shown!r} is not an http:// or https:// address, e.g. https://acrb.example.org"
        )
    if parts.query or parts.fragment or parts.username or parts.password:
        raise argparse.ArgumentTypeError(f"{shown!r}: give the address without ?, # or a login")
    return text.rstrip("/")


def text_within(value: str, model, field_name: str, option: str) -> str:
    """``value`` if it fits the column it is written to; else one line naming the option.
    SQLite stores a value past ``max_length`` where PostgreSQL refuses it: the app checks."""
    limit = model._meta.get_field(field_name).max_length
    if limit is not None and len(value) > limit:
        raise CommandError(f"{option}: {len(value)} characters, over the limit of {limit}")
    return value
