"""Settings read from the environment: where media are stored (docs/deployment.md)."""

import os
import subprocess
import sys
from pathlib import Path

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


# --- numbers from the environment: a bad value stops the process in one line -------------------

ROOT = Path(__file__).resolve().parents[2]
NUMBERS = [
    "DATABASE_CONN_MAX_AGE",
    "ACRB_LOGIN_FAILURE_LIMIT",
    "ACRB_LOGIN_COOLOFF_HOURS",
    "ACRB_HSTS_SECONDS",
    "ACRB_MAX_IMAGE_BYTES",
    "ACRB_MAX_IMAGE_PIXELS",
    "CELERY_VISIBILITY_TIMEOUT",
    "ACRB_MIN_SECONDS_PER_ITEM",
]


def _start(command: list[str], **environment) -> subprocess.CompletedProcess:
    # ACRB_HTTPS and a Redis broker: the variables read only then are read too.
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "acrb_web.settings",
        "ACRB_HTTPS": "1",
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/15",
        **environment,
    }
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("variable", NUMBERS)
def test_a_number_that_is_not_one_stops_django_in_one_line_naming_it(variable):
    started = _start([sys.executable, "-c", "import django; django.setup()"], **{variable: "abc"})
    assert started.returncode != 0
    [line] = started.stderr.strip().splitlines()
    assert variable in line and "'abc'" in line
    assert "Traceback" not in started.stderr


def test_manage_py_check_refuses_a_bad_image_limit_in_one_line():
    started = _start([sys.executable, "manage.py", "check"], ACRB_MAX_IMAGE_BYTES="abc")
    assert started.returncode != 0
    assert started.stderr.strip().splitlines() == [
        "ACRB_MAX_IMAGE_BYTES must be a whole number ≥ 0, got 'abc' (docs/deployment.md)"
    ]


def test_a_negative_number_is_refused_and_a_good_one_read():
    started = _start(
        [sys.executable, "-c", "import django; django.setup()"], ACRB_MAX_IMAGE_PIXELS="-5"
    )
    assert "ACRB_MAX_IMAGE_PIXELS must be a whole number ≥ 0, got '-5'" in started.stderr
    started = _start(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings; "
            "print(settings.ACRB_MAX_IMAGE_BYTES, settings.ACRB_DEFAULT_MIN_SECONDS_PER_ITEM)",
        ],
        ACRB_MAX_IMAGE_BYTES=" 1024 ",
        ACRB_MIN_SECONDS_PER_ITEM="2.5",
    )
    assert started.returncode == 0, started.stderr
    assert started.stdout.split() == ["1024", "2.5"]
