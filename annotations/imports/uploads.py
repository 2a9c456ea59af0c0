"""Unpack an uploaded manifest (a .jsonl, or a .zip holding one manifest and its images) safely."""

from __future__ import annotations

import zipfile
from pathlib import Path, PurePosixPath


class UploadInvalid(ValueError):
    pass


MAX_ARCHIVE_MEMBERS = 200_000
MAX_UNPACKED_BYTES = 20 * 1024**3


def unpack_upload(archive: Path, destination: Path, *, display_name: str | None = None) -> Path:
    """Return the manifest path inside ``destination``; refuse members that escape it (zip slip).

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
        return _extract(archive, destination, name)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise UploadInvalid(f"{name}: cannot be unpacked ({exc})") from None


def _extract(archive: Path, destination: Path, name: str) -> Path:
    with zipfile.ZipFile(archive) as bundle:
        members = bundle.infolist()
        if len(members) > MAX_ARCHIVE_MEMBERS:
            raise UploadInvalid(f"{name}: more than {MAX_ARCHIVE_MEMBERS} files")
        if sum(m.file_size for m in members) > MAX_UNPACKED_BYTES:
            raise UploadInvalid(f"{name}: unpacks to more than {MAX_UNPACKED_BYTES} bytes")
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
        bundle.extractall(destination)
    return destination / manifests[0].filename
