"""Local files for the backends: the storage's own paths, or temporary copies where the
storage has none (S3-compatible storage)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from scoring.reflect.models import FaceImage


@contextmanager
def local_image_paths(images: Iterable[FaceImage]) -> Iterator[dict[int, str]]:
    """image id → a local path, valid inside the ``with`` block."""
    paths: dict[int, str] = {}
    folder: str | None = None
    try:
        for image in images:
            try:
                paths[image.pk] = image.file.path
            except NotImplementedError:
                folder = folder or tempfile.mkdtemp(prefix="reflect-images-")
                target = Path(folder) / f"{image.pk}{Path(image.file.name).suffix}"
                with image.file.open("rb") as source, target.open("wb") as copy:
                    shutil.copyfileobj(source, copy)
                paths[image.pk] = str(target)
        yield paths
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
