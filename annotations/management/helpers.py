"""Helpers of management commands, shared by every app's commands (annotations is the
bottom layer; docs/architecture.md)."""

from pathlib import Path

import yaml
from django.core.management import base
from django.core.management.base import CommandError
from django.db import DataError, OperationalError, ProgrammingError

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
