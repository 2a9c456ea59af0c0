"""Judges and VLM backends read files from local paths; storages without paths (S3) get a
temporary copy that is removed after the block."""

import os

import pytest

from annotations.models import Item
from scoring.storage import local_file_paths
from tests.support.storage import NoPathFile

pytestmark = pytest.mark.django_db


def test_local_storage_paths_are_used_and_others_copied(imported_study):
    local, remote = Item.objects.filter(study=imported_study).order_by("pk")[:2]
    remote_file = NoPathFile(remote.image)
    with local_file_paths({"local": local.image, "remote": remote_file, "none": None}) as paths:
        assert paths["local"] == local.image.path
        copied = paths["remote"]
        assert copied != remote.image.path
        with open(copied, "rb") as handle:
            assert handle.read() == remote.image.storage.open(remote.image.name).read()
        assert paths["none"] is None
    assert not os.path.exists(copied)
