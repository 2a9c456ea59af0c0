"""Loading a script of bench/ as a module, as the tests of bench/ need it."""

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def load_bench_script(name: str, *, register: bool = False):
    """bench/NAME.py as the module ``bench_NAME`` (its sibling ``harness`` importable while it
    loads); ``register`` also puts it in sys.modules, for a script whose functions a process
    pool pickles by module name."""
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        if register:
            sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH))
    return module
