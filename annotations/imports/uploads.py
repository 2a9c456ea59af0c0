"""Unpack an uploaded manifest (a .jsonl, or a .zip holding one manifest and its images) safely."""

from __future__ import annotations

import zipfile
from pathlib import Path, PurePosixPath


class UploadInvalid(ValueError):
    pass


MAX_ARCHIVE_MEMBERS = 200_000
# What an archive may unpack to in all, and any one member: counted on the bytes actually
# written (a member's declared size can lie), so a zip bomb stops at the budget, not on a full
# disk. A member above the image limit could never be imported anyway.
MAX_UNPACKED_BYTES = 4 * 1024**3
MAX_MEMBER_BYTES = 1024**3
CHUNK_BYTES = 1024**2


def unpack_upload(
    archive: Path,
    destination: Path,
    *,
    display_name: str | None = None,
    max_total_bytes: int = MAX_UNPACKED_BYTES,
    max_member_bytes: int = MAX_MEMBER_BYTES,
) -> Path:
    """Return the manifest path inside ``destination``; refuse members that escape it (zip
    slip) and archives that unpack past the byte budget.

    Messages name ``display_name`` (the file as the user called it), not our stored copy.
    """
    name = display_name or archive.name
    destination.mkdir(parents=True, exist_ok=True)
    if archive.suffix.lower() == ".jsonl":
        return archive
    if not zipfile.is_zipfile(archive):
        raise UploadInvalid(
            f"{name}: upload a .jsonl manifest or a .zip holding one manifest and its images"
        )
    try:
        return _extract(archive, destination, name, max_total_bytes, max_member_bytes)
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as exc:
        raise UploadInvalid(f"{name}: cannot be unpacked ({exc})") from None


def _extract(archive: Path, destination: Path, name: str, budget: int, member_budget: int):
    with zipfile.ZipFile(archive) as bundle:
        members = bundle.infolist()
        if len(members) > MAX_ARCHIVE_MEMBERS:
            raise UploadInvalid(f"{name}: more than {MAX_ARCHIVE_MEMBERS} files")
        for member in members:
            path = PurePosixPath(member.filename)
            if path.is_absolute() or ".." in path.parts:
                raise UploadInvalid(
                    f"{name}: member {member.filename!r} escapes the archive's folder"
                )
        manifests = [m for m in members if m.filename.endswith(".jsonl") and not m.is_dir()]
        if len(manifests) != 1:
            raise UploadInvalid(
                f"{name}: expected exactly one .jsonl manifest, found {len(manifests)}"
            )
        written = 0
        for member in members:
            target = destination / member.filename
            if member.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            left = budget - written
            written += _copy_member(bundle, member, target, name, left, member_budget)
    return destination / manifests[0].filename


def _copy_member(bundle, member, target: Path, name: str, left: int, member_budget: int) -> int:
    """Stream one member to ``target``; refuse it as soon as it passes either budget."""
    copied = 0
    with bundle.open(member) as source, target.open("wb") as sink:
        while chunk := source.read(CHUNK_BYTES):
            copied += len(chunk)
            if copied > member_budget:
                raise UploadInvalid(
                    f"{name}: member {member.filename!r} unpacks to more than {member_budget} bytes"
                )
            if copied > left:
                raise UploadInvalid(f"{name}: unpacks to more bytes than the upload budget")
            sink.write(chunk)
    return copied
