"""matplotlib without global state, for figures drawn in threaded views and tasks (Django-free).

pyplot keeps a process-wide figure registry and its state is not thread-safe; gunicorn's threaded
workers drew report figures at the same time and 4 of 21 failed with a mathtext ParseException
inside ``tight_layout()``. So: every figure is a ``matplotlib.figure.Figure`` with its own
canvas, every label is plain text (``$`` escaped, so no label is parsed as mathtext), and log
axes get plain tick labels (matplotlib's default ``$10^{0}$`` labels go through the mathtext
parser, which is shared between threads). matplotlib is imported inside the functions, so the
web app starts without loading it.
"""

from __future__ import annotations

import io
import threading
from contextlib import contextmanager

# rcParams are process-wide: a figure that needs its own (``rc_context``) takes this lock, or two
# threads restoring each other's values would leave the process with a stranger's settings.
RC_LOCK = threading.RLock()


def new_figure(*, figsize: tuple[float, float], dpi: int = 110):
    """A Figure with its own Agg canvas, never registered with pyplot."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(figure)
    return figure


def figure_bytes(figure, fmt: str, **savefig_options) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format=fmt, **savefig_options)
    return buffer.getvalue()


def plain_text(label) -> str:
    """A label drawn as written: ``$`` escaped so matplotlib never parses it as mathtext."""
    return str(label).replace("$", r"\$")


def plain_log_ticks(axis) -> None:
    """Tick labels of a log axis as plain numbers (0.5, 1, 10) instead of mathtext powers."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axis.set_minor_formatter(NullFormatter())


@contextmanager
def figure_rc(params: dict):
    """``matplotlib.rc_context`` under RC_LOCK."""
    import matplotlib

    with RC_LOCK, matplotlib.rc_context(params):
        yield
