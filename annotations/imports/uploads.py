"""Unpack an uploaded manifest (a .jsonl, or a .zip holding one manifest and its images) safely,
and remove the upload folders nobody came back for."""

from __future__ import annotations

import shutil
import time
import zipfile
from pathlib import Path, PurePosixPath


class UploadInvalid(ValueError):
    pass


MAX_ARCHIVE_MEMBERS = 200_000
# What an archive may unpack to in all: counted on the declared sizes before anything is
# written, and again on the bytes actually written (a declared size can lie), so a zip bomb
# stops at the budget, not on a full disk.
MAX_UNPACKED_BYTES = 4 * 1024**3
# Any one member but the manifest: an image, so the image limit (settings.ACRB_MAX_IMAGE_BYTES,
# which callers pass; this is its default). A member past it could never be imported, and a
# 1 GiB member was once written to disk for 19 s of a web request before it was refused.
MAX_MEMBER_BYTES = 25 * 1024**2
# The manifest itself: one JSON line per item, about 1 KiB each; 200,000 items fit easily.
MAX_MANIFEST_BYTES = 512 * 1024**2
CHUNK_BYTES = 1024**2
MANIFEST_SUFFIX = ".jsonl"


def unpack_upload(
    archive: Path,
    destination: Path,
    *,
    display_name: str | None = None,
    max_total_bytes: int = MAX_UNPACKED_BYTES,
    max_member_bytes: int = MAX_MEMBER_BYTES,
    max_manifest_bytes: int = MAX_MANIFEST_BYTES,
) -> Path:
    """Return the manifest path inside ``destination``; refuse members that escape it (zip
    slip), a member larger than ``max_member_bytes`` (the image limit; the manifest has its
    own), and archives that unpack past the byte budget. Sizes are checked as declared before
    anything is written, and as streamed.

    Messages name ``display_name`` (the file as the user called it), not our stored copy.
    """
    name = display_name or archive.name
    destination.mkdir(parents=True, exist_ok=True)
    if archive.suffix.lower() == MANIFEST_SUFFIX:
        return archive
    if not zipfile.is_zipfile(archive):
        kind = f"a {archive.suffix[1:].upper()} file" if archive.suffix else "another file"
        raise UploadInvalid(
            f"{name}: expected a JSONL manifest (.jsonl) or a .zip holding one manifest and its "
            f"images, not {kind} (docs/formats.md)"
        )
    limits = _Limits(max_total_bytes, max_member_bytes, max_manifest_bytes)
    try:
        return _extract(archive, destination, name, limits)
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as exc:
        raise UploadInvalid(f"{name}: cannot be unpacked ({exc})") from None


class _Limits:
    def __init__(self, total: int, member: int, manifest: int):
        self.total, self.member, self.manifest = total, member, manifest

    def of(self, member: zipfile.ZipInfo) -> int:
        return self.manifest if member.filename.endswith(MANIFEST_SUFFIX) else self.member


def _extract(archive: Path, destination: Path, name: str, limits: _Limits) -> Path:
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
        manifests = [m for m in members if m.filename.endswith(MANIFEST_SUFFIX) and not m.is_dir()]
        if len(manifests) != 1:
            raise UploadInvalid(
                f"{name}: expected exactly one .jsonl manifest, found {len(manifests)}"
            )
        _check_declared_sizes(members, name, limits)
        written = 0
        for member in members:
            target = destination / member.filename
            if member.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            left = limits.total - written
            written += _copy_member(bundle, member, target, name, left, limits.of(member))
    return destination / manifests[0].filename


def _check_declared_sizes(members, name: str, limits: _Limits) -> None:
    """Before a byte is written: every member's declared size against its limit, and their sum
    against the budget."""
    for member in members:
        if member.file_size > limits.of(member):
            raise UploadInvalid(_too_large(name, member.filename, limits.of(member)))
    if sum(member.file_size for member in members) > limits.total:
        raise UploadInvalid(f"{name}: unpacks to more bytes than the upload budget")


def _too_large(name: str, member: str, limit: int) -> str:
    return f"{name}: member {member!r} unpacks to more than {limit / 1024**2:g} MiB, the limit"


def _copy_member(bundle, member, target: Path, name: str, left: int, member_budget: int) -> int:
    """Stream one member to ``target``; refuse it as soon as it passes either budget."""
    copied = 0
    try:
        with bundle.open(member) as source, target.open("wb") as sink:
            while chunk := source.read(CHUNK_BYTES):
                copied += len(chunk)
                if copied > member_budget:
                    raise UploadInvalid(_too_large(name, member.filename, member_budget))
                if copied > left:
                    raise UploadInvalid(f"{name}: unpacks to more bytes than the upload budget")
                sink.write(chunk)
    except UploadInvalid:
        target.unlink(missing_ok=True)
        raise
    return copied


# --- abandoned upload folders -----------------------------------------------------------------

# The folders an upload is kept in under VAR_DIR/uploads until its import ends: "upload-" (an
# items import waiting for its job), "replace-" (a replaced item image) and "new-study-" (a new
# study checked but not yet created). A closed tab or a lost job leaves one behind; after a day
# nobody is coming back for it (docs/deployment.md, "Upload folders").
UPLOAD_PREFIXES = ("upload-", "replace-", "new-study-")
UPLOADS_KEPT_SECONDS = 24 * 3600


def uploads_prune(root: Path, *, older_than_s: float = UPLOADS_KEPT_SECONDS) -> list[Path]:
    """Remove the upload folders under ``root`` last changed more than ``older_than_s`` seconds
    ago; return them. Folders of other names are left alone."""
    cutoff = time.time() - older_than_s
    removed = []
    if not root.is_dir():
        return removed
    for folder in sorted(root.iterdir()):
        if not folder.name.startswith(UPLOAD_PREFIXES) or not folder.is_dir():
            continue
        try:
            if folder.stat().st_mtime < cutoff:
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
        except OSError:  # removed meanwhile by the job that owned it
            continue
    return removed
