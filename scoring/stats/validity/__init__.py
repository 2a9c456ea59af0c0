"""The validity suite: does every interval keep its coverage, and every test its size, under the
study designs people run? (docs/metrics.md, "Calibration").

Each scenario module simulates studies with known truth through the same public functions the
app uses and returns ``core.Check`` records; ``suite.run_suite`` runs them all, and
``bench/validity_suite.py`` prints the JSON line. No Django import: a notebook can run it.
"""
