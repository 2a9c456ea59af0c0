"""Settings read from the environment: where media are stored (docs/deployment.md)."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from acrb_web.settings import media_storage


def test_media_default_to_a_folder():
    assert media_storage({}) == {"BACKEND": "django.core.files.storage.FileSystemStorage"}


def test_s3_storage_is_configured_from_acrb_s3_variables():
    environ = {
        "ACRB_STORAGE_BACKEND": "s3",
        "ACRB_S3_BUCKET": "audit-media",
        "ACRB_S3_ENDPOINT_URL": "http://minio.internal:9000",
        "ACRB_S3_PREFIX": "acrb",
    }
    assert media_storage(environ) == {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": "audit-media",
            "endpoint_url": "http://minio.internal:9000",
            "location": "acrb",
            "default_acl": None,
            "file_overwrite": False,
        },
    }


def test_s3_without_a_bucket_is_refused_with_the_variable_named():
    with pytest.raises(ImproperlyConfigured, match="ACRB_S3_BUCKET"):
        media_storage({"ACRB_STORAGE_BACKEND": "s3"})


def test_a_dotted_path_is_used_as_given():
    path = "django.core.files.storage.InMemoryStorage"
    assert media_storage({"ACRB_STORAGE_BACKEND": path}) == {"BACKEND": path}
