"""A new study from uploaded images: stage and check, preview, then create all or nothing.

Two steps, so a research lead sees every problem and a preview before anything is written
(docs/annotation.md, "Create a study in the browser"):

1. ``study_upload_stage`` copies the upload into a folder only the server names, builds the
   manifest the images and CSV describe (``attributes``), unpacks it with the import's own zip
   checks (``uploads.unpack_upload``) and parses it with the import's own rules
   (``manifest.parse_manifest``). Every problem comes back at once; nothing is kept on failure.
2. ``study_upload_commit`` creates the study and imports the staged manifest in one
   transaction (``importers.items_import``): a failure leaves neither a study nor files.
"""

from __future__ import annotations

import base64
import io
import json
import re
import secrets
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from django.db import transaction
from PIL import Image

from annotations import services
from annotations.imports import importers
from annotations.imports.attributes import manifest_draft, remap_errors
from annotations.imports.manifest import ItemRecord, ManifestInvalid, RecordError, parse_manifest
from annotations.imports.uploads import UploadInvalid, unpack_upload, uploads_prune
from annotations.models import Study

STAGING_PREFIX = "new-study-"
GENERATED_MANIFEST = "acrb-manifest.jsonl"
_TOKEN = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class StagedStudy:
    token: str
    records: list[ItemRecord]


def staging_folder(root: Path, token: str) -> Path:
    """The folder of a staged upload; a token the server did not make is refused."""
    if not isinstance(token, str) or not _TOKEN.fullmatch(token):
        raise UploadInvalid("this upload is no longer available; check it again")
    folder = root / f"{STAGING_PREFIX}{token}"
    if not folder.is_dir():
        raise UploadInvalid("this upload is no longer available; check it again")
    return folder


def study_upload_stage(
    *,
    root: Path,
    images: list,
    archive=None,
    csv_bytes: bytes | None = None,
    defaults: dict[str, str],
    mode: str,
) -> StagedStudy:
    """Stage and check an upload (image files, or a zip of them) and its attributes.

    ``images`` and ``archive`` are uploaded files (``name`` and ``chunks()``). Raises
    ManifestInvalid listing every problem; on any failure the staging folder is removed.
    """
    uploads_prune(root)  # checks a day old that nobody created (docs/deployment.md)
    token = secrets.token_hex(16)
    folder = root / f"{STAGING_PREFIX}{token}"
    folder.mkdir(parents=True)
    try:
        records = _stage(folder, images, archive, csv_bytes, defaults, mode)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return StagedStudy(token=token, records=records)


def _stage(folder, images, archive, csv_bytes, defaults, mode) -> list[ItemRecord]:
    bundle = folder / "upload.zip"
    display = archive.name if archive is not None else "the uploaded images"
    if archive is not None:
        _copy(archive, bundle)
    else:
        _zip_images(images, bundle, max_bytes=services.image_limits().max_bytes)
    try:
        if not zipfile.is_zipfile(bundle):
            raise UploadInvalid(f"{display}: not a zip archive")
        with zipfile.ZipFile(bundle) as opened:
            names = opened.namelist()
        has_manifest = any(name.endswith(".jsonl") for name in names)
        draft = None
        if has_manifest and csv_bytes is not None:
            raise UploadInvalid(f"{display}: holds its own .jsonl manifest; leave out the CSV")
        if not has_manifest:
            draft = manifest_draft(csv_bytes=csv_bytes, members=names, defaults=defaults, mode=mode)
            with zipfile.ZipFile(bundle, "a") as opened:
                opened.writestr(GENERATED_MANIFEST, _jsonl(draft.lines))
        manifest = unpack_upload(
            bundle,
            folder / "files",
            display_name=display,
            max_member_bytes=services.image_limits().max_bytes,
        )
    except (UploadInvalid, zipfile.BadZipFile, OSError, EOFError) as exc:
        raise ManifestInvalid([RecordError(0, "(upload)", str(exc))]) from None
    finally:
        bundle.unlink(missing_ok=True)
    columns = draft.problems[: draft.column_problems] if draft else []
    problems = draft.problems[draft.column_problems :] if draft else []
    try:
        records = parse_manifest(manifest, services.image_limits())
    except ManifestInvalid as invalid:
        problems += remap_errors(invalid.errors, draft) if draft else invalid.errors
        records = []
    if columns or problems:
        # The columns' problems first: the rows' are often their consequences.
        raise ManifestInvalid([*columns, *sorted(problems, key=lambda e: e.line)])
    mismatched = [
        RecordError(r.line, "mode", f"{r.mode!r} differs from the study's mode {mode!r}")
        for r in records
        if r.mode != mode
    ]
    if mismatched:
        raise ManifestInvalid(mismatched)
    return records


def _copy(upload, target: Path) -> None:
    with target.open("wb") as handle:
        for chunk in upload.chunks():
            handle.write(chunk)


def _zip_images(images: list, bundle: Path, *, max_bytes: int) -> None:
    """The separately uploaded files as one zip, each under its file name only; a file over the
    image limit is refused before it is copied."""
    seen: set[str] = set()
    duplicates, too_large = [], []
    with zipfile.ZipFile(bundle, "w", compression=zipfile.ZIP_STORED) as opened:
        for upload in images:
            name = PurePosixPath(str(upload.name).replace("\\", "/")).name or "unnamed"
            if name in seen:
                duplicates.append(name)
                continue
            seen.add(name)
            if (upload.size or 0) > max_bytes:
                too_large.append(name)
                continue
            with opened.open(name, "w") as member:
                for chunk in upload.chunks():
                    member.write(chunk)
    problems = [RecordError(0, "(upload)", f"two files are named {name}") for name in duplicates]
    problems += [
        RecordError(0, "(upload)", f"{name} is larger than {max_bytes / 1024**2:g} MiB, the limit")
        for name in too_large
    ]
    if problems:
        raise ManifestInvalid(problems)


def _jsonl(lines: list[dict]) -> str:
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def staged_manifest(folder: Path) -> Path:
    manifests = sorted((folder / "files").rglob("*.jsonl"))
    if len(manifests) != 1:
        raise UploadInvalid("this upload is no longer available; check it again")
    return manifests[0]


def study_upload_commit(*, root: Path, token: str, name: str, slug: str, mode: str) -> Study:
    """Create the study and import every staged item, or nothing (ManifestInvalid/UploadInvalid).

    The staged files are re-checked by ``items_import`` inside the transaction that creates the
    study, so a file changed since the preview cannot slip in; the staging folder goes either way
    once the study exists.
    """
    folder = staging_folder(root, token)
    manifest = staged_manifest(folder)
    with transaction.atomic():
        if Study.objects.filter(slug=slug).exists():
            raise UploadInvalid(f"a study with the address {slug!r} already exists")
        study = services.study_create(name=name, slug=slug, mode=mode)
        importers.items_import(study=study, manifest=manifest)
    shutil.rmtree(folder, ignore_errors=True)
    return study


def study_upload_discard(*, root: Path, token: str) -> None:
    try:
        shutil.rmtree(staging_folder(root, token), ignore_errors=True)
    except UploadInvalid:
        pass


def thumbnail_data_uri(path: Path | None, size: int = 96) -> str:
    """A small JPEG of an already checked image, inline, for the preview (no file is served)."""
    if path is None:
        return ""
    try:
        with Image.open(path) as img:
            img.thumbnail((size, size))
            buffer = io.BytesIO()
            # JPEG: a tenth of a PNG's size for a photo, so fifty fit in one answer.
            img.convert("RGB").save(buffer, format="JPEG", quality=80)
    except Exception:  # Pillow raises many types; the preview then shows no picture
        return ""
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
