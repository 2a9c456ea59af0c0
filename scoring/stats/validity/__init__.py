"""The validity suite: does every interval keep its coverage, and every test its size, under the
study designs people run? (docs/metrics.md, "Calibration").

Each scenario module simulates studies with known truth through the same public functions the
app uses and returns ``core.Check`` records; ``suite.run_suite`` runs them all, and
``bench/validity_suite.py`` prints the JSON line. ``study_design`` reads one study's design from
its records and runs the quick suite at it (``validate_design``; ``design_verdict`` words the
result). No Django import: a notebook can run it.
"""
