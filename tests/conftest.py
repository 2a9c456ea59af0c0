"""Root of the test tree, kept free of Django, PIL and Celery.

The statistics tests (tests/scoring/stats/) need only numpy, pandas, scipy, scikit-learn,
statsmodels, krippendorff and hypothesis, and run where Django is not installed. The app
fixtures and helpers (a small study with real image files, annotators, logged-in clients, eager
Celery; ``from tests.support.django_fixtures import client_for``) live in
tests/support/django_fixtures.py and load only where pytest-django is installed.
"""

from importlib.util import find_spec

if find_spec("pytest_django") is not None:
    pytest_plugins = ["tests.support.django_fixtures"]
