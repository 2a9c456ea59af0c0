"""Command-line arguments that more than one generation command takes."""

from annotations.management.helpers import SEED, bounded_float
from generation.prompts.controls import DEFAULT_HARMFUL_SHARE

# A share in (0, 1], as ``harmful_share_checked`` takes it.
HARMFUL_SHARE = bounded_float(0, 1, low_open=True)


def add_harmful_control_arguments(parser) -> None:
    """``--harmful-controls [SHARE]`` and ``--harmful-seed`` (docs/generation.md, "Harmful
    controls"): ``build_prompts`` and ``plan_study`` plan the controls the same way."""
    parser.add_argument(
        "--harmful-controls",
        nargs="?",
        const=DEFAULT_HARMFUL_SHARE,
        type=HARMFUL_SHARE,
        metavar="SHARE",
        help="add harmful controls (OVERT-unsafe pairs), SHARE per domain's base prompts "
        f"(default {DEFAULT_HARMFUL_SHARE}; docs/generation.md, 'Harmful controls')",
    )
    parser.add_argument("--harmful-seed", type=SEED, default=0, help="draws the controls")
