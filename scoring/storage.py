"""Local files for model backends, which read paths: the storage's own path where it has one
(a local folder), else a temporary copy (S3-compatible storage) that lives as long as the block."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Hashable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from django.db.models.fields.files import FieldFile


@contextmanager
def local_file_paths(
    files: Mapping[Hashable, FieldFile | None],
) -> Iterator[dict[Hashable, str | None]]:
    """key → a local path for each stored file (None where the field holds no file)."""
    paths: dict[Hashable, str | None] = {}
    folder: str | None = None
    try:
        for key, stored in files.items():
            if not stored or not stored.name:
                paths[key] = None
                continue
            try:
                paths[key] = stored.path
            except NotImplementedError:
                folder = folder or tempfile.mkdtemp(prefix="model-inputs-")
                target = Path(folder) / f"{len(paths)}{Path(stored.name).suffix}"
                with stored.open("rb") as source, target.open("wb") as copy:
                    shutil.copyfileobj(source, copy)
                paths[key] = str(target)
        yield paths
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
