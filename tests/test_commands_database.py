"""A command run before `migrate` (or with the database down) ends in one line naming the
fix, never a traceback."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError
from django.db import ProgrammingError

from annotations.management.helpers import BaseCommand

ROOT = Path(__file__).resolve().parents[1]


def test_a_command_before_migrate_says_so_in_one_line(tmp_path):
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'empty.sqlite3'}"}
    env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run(
        [sys.executable, "manage.py", "create_batch", "--study", "s", "--name", "b",
         "--policy", "k-overlap", "--annotators", "all", "--k", "2"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "run `manage.py migrate` first" in line and "no such table" in line


class _Raising(BaseCommand):
    def __init__(self, error):
        super().__init__()
        self.error = error

    def handle(self, *args, **options):
        raise self.error


def test_a_missing_postgresql_table_is_one_line_and_other_sql_errors_stay_bugs():
    missing = ProgrammingError('relation "annotations_study" does not exist')
    with pytest.raises(CommandError, match="run `manage.py migrate` first"):
        _Raising(missing).execute(
            traceback=False, no_color=True, force_color=False, skip_checks=True
        )
    with pytest.raises(ProgrammingError):  # a bug in our SQL: the traceback is wanted
        _Raising(ProgrammingError("syntax error at or near")).execute(
            traceback=False, no_color=True, force_color=False, skip_checks=True
        )
