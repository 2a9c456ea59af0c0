"""Every test here runs a validity-suite simulation: marked ``validity`` (.ci/run runs them once)."""

import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if "/validity/" in str(item.fspath):
            item.add_marker(pytest.mark.validity)
