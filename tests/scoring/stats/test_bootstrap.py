"""The one percentile interval: against numpy on one statistic's resamples, undefined ones left out."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.stats.bootstrap import percentile_interval


@given(st.lists(st.floats(-5, 5) | st.just(np.nan) | st.just(np.inf), min_size=1, max_size=60))
def test_one_dimensional_samples_match_numpy_percentile_over_the_defined_ones(samples):
    samples = np.array(samples)
    low, high, n_undefined = percentile_interval(samples, confidence=0.95)
    defined = samples[np.isfinite(samples)]
    assert int(n_undefined) == samples.size - defined.size
    if defined.size == 0:
        assert np.isnan(low) and np.isnan(high)
    else:
        expected = np.percentile(defined, [2.5, 97.5])
        assert (float(low), float(high)) == (
            pytest.approx(expected[0], abs=1e-12),
            pytest.approx(expected[1], abs=1e-12),
        )


def test_no_samples_gives_nan_and_no_error():
    low, high, n_undefined = percentile_interval(np.array([]))
    assert np.isnan(low) and np.isnan(high) and int(n_undefined) == 0
