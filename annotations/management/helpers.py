"""Helpers of management commands, shared by every app's commands (annotations is the
bottom layer; docs/architecture.md)."""

from pathlib import Path

from django.core.management.base import CommandError

from annotations.models import Study


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
    (issue 21: ``export_metrics --out missing/dir/x.json``)."""
    out = Path(out)
    parent = out.parent
    if out.is_dir():
        raise CommandError(f"{option} {out}: is a folder; name a file")
    if not parent.is_dir():
        what = "is not a folder" if parent.exists() else "does not exist"
        raise CommandError(f"{option} {out}: folder {parent} {what}")
    return out
