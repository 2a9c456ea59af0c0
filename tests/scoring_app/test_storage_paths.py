"""Judges read images from local paths; storages without paths (S3) get a temporary copy."""

import os

import pytest

from annotations.models import Item
from scoring.services import local_image_paths

pytestmark = pytest.mark.django_db


class NoPathFile:
    """A stored file as an S3-style storage hands it out: readable, no local path."""

    def __init__(self, field_file):
        self._field_file = field_file
        self.name = field_file.name

    @property
    def path(self):
        raise NotImplementedError("This backend doesn't support absolute paths.")

    def open(self, mode="rb"):
        return self._field_file.storage.open(self.name, mode)


def test_local_storage_paths_are_used_and_others_copied(imported_study):
    items = list(Item.objects.filter(study=imported_study).order_by("pk")[:2])
    local, remote = items
    remote.image = NoPathFile(remote.image)
    without_image = Item(pk=10**9, study=imported_study, attribute_value=local.attribute_value)
    with local_image_paths([local, remote, without_image]) as paths:
        assert paths[local.pk] == local.image.path
        copied = paths[remote.pk]
        assert (
            copied != local.image.path
            and open(copied, "rb").read() == local.image.storage.open(remote.image.name).read()
        )
        assert paths[without_image.pk] is None
    assert not os.path.exists(copied)
