"""Deleting a study removes its items (which protect their attribute values) and, after the
commit, its image files; both demo seeders rebuild through this one service."""

import pytest
from django.core.files.storage import default_storage

from annotations import services
from annotations.models import AttributeValue, Item, Study


@pytest.mark.django_db(transaction=True)
def test_study_delete_removes_items_values_and_files(imported_study):
    names = [item.image.name for item in Item.objects.filter(study=imported_study)]
    assert names and all(default_storage.exists(name) for name in names)
    services.study_delete(study=imported_study)
    assert not Study.objects.filter(pk=imported_study.pk).exists()
    assert not Item.objects.filter(study_id=imported_study.pk).exists()
    assert not AttributeValue.objects.filter(study_id=imported_study.pk).exists()
    assert not any(default_storage.exists(name) for name in names)
