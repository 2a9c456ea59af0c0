"""Settings that fail safe and logs an operator can read (issue 20 items 12 and 13)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from tests.support.django_fixtures import client_for

ROOT = Path(__file__).resolve().parents[2]


# --- item 13: no public secret key outside DEBUG --------------------------------------------


BUILT_IN_SECRET_KEY = "insecure-local-only-set-DJANGO_SECRET_KEY"


def test_the_built_in_key_is_refused_without_debug(tmp_path):
    from acrb_web.settings import secret_key

    with pytest.raises(ImproperlyConfigured, match="built-in key"):
        secret_key({"DJANGO_SECRET_KEY": BUILT_IN_SECRET_KEY}, debug=False, var_dir=tmp_path)
    assert (
        secret_key({"DJANGO_SECRET_KEY": BUILT_IN_SECRET_KEY}, debug=True, var_dir=tmp_path)
        == BUILT_IN_SECRET_KEY
    )


def test_without_a_key_a_random_one_is_made_once_and_kept(tmp_path):
    from acrb_web.settings import secret_key

    first = secret_key({}, debug=False, var_dir=tmp_path)
    assert first != BUILT_IN_SECRET_KEY and len(first) >= 50
    assert secret_key({}, debug=False, var_dir=tmp_path) == first
    assert oct((tmp_path / "secret_key").stat().st_mode & 0o777) == "0o600"
    assert secret_key({"DJANGO_SECRET_KEY": "mine"}, debug=False, var_dir=tmp_path) == "mine"


def test_the_app_refuses_to_start_with_debug_off_and_the_built_in_key(tmp_path):
    environ = {
        **os.environ,
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": BUILT_IN_SECRET_KEY,
        "ACRB_VAR_DIR": str(tmp_path),
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "DJANGO_SECRET_KEY is the built-in key" in done.stderr


# --- item 12: a 4xx is one line, a 5xx keeps its traceback ----------------------------------


@pytest.mark.django_db
def test_a_403_is_logged_as_one_line(batch, annotators, caplog):
    client = client_for(annotators[0])
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = client.get(reverse("staff:study_list"))
    assert response.status_code == 403
    records = [r for r in caplog.records if r.name == "django.request"]
    assert records and all(r.exc_info is None for r in records), records
    assert "Traceback" not in caplog.text


def test_a_5xx_keeps_its_traceback(caplog):
    logger = logging.getLogger("django.request")
    with caplog.at_level(logging.WARNING, logger="django.request"):
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            logger.error("Internal Server Error: /x/", exc_info=True, extra={"status_code": 500})
            logger.warning("Forbidden: /x/", exc_info=True, extra={"status_code": 403})
    server, client = [r for r in caplog.records if r.name == "django.request"]
    assert server.exc_info is not None and client.exc_info is None
