"""Every test here runs a validity-suite simulation: marked ``validity`` (.ci/run runs them once)."""

import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if "/validity/" in str(item.fspath):
            item.add_marker(pytest.mark.validity)


def quick_checks(run):
    """A scenario's checks in quick mode (one BLAS thread, seed 0), asserted to meet the quick
    targets: the one body of every per-scenario quick test."""
    from threadpoolctl import threadpool_limits

    from scoring.stats.validity import core

    with threadpool_limits(limits=1):
        checks = run(core.QUICK_REPLICATIONS, 0)
    assert checks
    assert not core.failing(checks, core.QUICK_TARGETS)
    return checks
