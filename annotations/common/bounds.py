"""Bounds of the numbers users type, shared by commands (their argument parsers), forms and the
services that check them again: one value each, so a form and a command cannot disagree."""

# What numpy and scikit-learn take as a seed (``random_state``): 0 to 2**32 - 1. A 23-digit seed
# typed into a form is a typo, not a seed.
MAX_SEED = 2**32 - 1

# Bootstrap resamples and permutations: 100,000 is far past any published use (2,000 is the
# default) and still fits in memory for 25,000 items; "--resamples 99999999999999" once asked
# numpy for 2 PiB.
MAX_RESAMPLES = 100_000

# Base prompts drawn into a plan (the shipped sets hold 108 and 1,800).
MAX_SAMPLE_SIZE = 1_000_000
