"""The answered study and the short-resampling switch of test_pages, shared with the report
folder tests (only where Django is installed: the pure report tests run without it)."""

try:
    from tests.scoring.report.test_pages import answered_study, fast_report  # noqa: F401
except ImportError:  # no Django here
    pass
