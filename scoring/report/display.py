"""The report's formatters: numbers, p-values, intervals, confidence levels and table notes as
the page prints them (Django-free; docs/report.md). One definition of each format: the report's
sections (``study_tables``, ``ppi_tables``, ``safety``, ``executive_summary``, ``text``, the
REFLECT part), the staff summary and the side-by-side table all print through these, so a format
changes in this one file. This module computes nothing and imports no other report module.
"""

from __future__ import annotations

DASH = "—"


def number(value, digits: int = 3) -> str:
    """``value`` to ``digits`` decimals; a value that rounds to zero prints as 0, never −0 (a
    coefficient of −1e-16 is floating-point noise, not a negative effect)."""
    if value is None:
        return DASH
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``1 item``, ``3 items``, ``2 analyses`` (with ``plural``)."""
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"


def percent(value, digits: int = 1) -> str:
    return DASH if value is None else f"{100 * value:.{digits}f}%"


def p_value(value) -> str:
    if value is None:
        return DASH
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def ratio_number(value) -> str:
    """A ratio readable across orders of magnitude: 0.0031, 0.30, 3.37, 1,602 (not 0.00, 1601.64)."""
    if value is None:
        return DASH
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 0.1:
        return f"{value:.2f}"
    return f"{value:.2g}"


def ratio_with_interval(value, low, high) -> str:
    if low is None or high is None:
        return ratio_number(value)
    if low == high:
        return f"{ratio_number(value)} {ZERO_WIDTH}"
    return f"{ratio_number(value)} [{ratio_number(low)}, {ratio_number(high)}]"


CORRECTIONS = {
    "haldane_anscombe": "a zero cell: 0.5 added to every cell (Haldane–Anscombe correction)",
}


# docs/metrics.md, "Intervals that cannot carry uncertainty": never "0.000 [0.000, 0.000]".
ZERO_WIDTH = "(no interval: every resample gave the same value)"


def interval(low, high, digits: int = 3, *, as_percent: bool = False) -> str:
    """``[low, high]``; "" without bounds; the reason instead of a zero-width interval."""
    if low is None or high is None:
        return ""
    if low == high:
        return ZERO_WIDTH
    show = (lambda v: percent(v, digits - 2)) if as_percent else (lambda v: number(v, digits))
    return f"[{show(low)}, {show(high)}]"


def with_interval(value, low, high, digits: int = 3, *, as_percent: bool = False) -> str:
    point = percent(value, digits - 2) if as_percent else number(value, digits)
    return f"{point} {interval(low, high, digits, as_percent=as_percent)}".strip()


def fleiss_scope(block: dict) -> str:
    """Which items Fleiss' κ rests on, when fewer than the block's ``n_items``: it needs the same
    number of annotations per item, so it uses the items with the most common number
    (docs/metrics.md, "Fleiss' kappa"). One wording for the dashboard, the summary and the report,
    so "Fleiss' κ … · 99 items" never contradicts the export's ``fleiss_kappa_n_items: 67``."""
    n_fleiss, n_items = block.get("fleiss_kappa_n_items"), block.get("n_items")
    if block.get("fleiss_kappa") is None or not n_fleiss or n_fleiss == n_items:
        return ""
    per_item = block.get("fleiss_kappa_annotations_per_item")
    each = f", those with {per_item} annotations each" if per_item else ""
    return f"on {n_fleiss} of {n_items} items{each}"


def items_and_labels(entry: dict) -> str:
    """``n`` as "items (labels)": 120 (240) when two annotators labelled each item; the label
    count alone where the entry has no ``n_items`` (docs/metrics.md, "Study export: rates")."""
    n, n_items = entry.get("n"), entry.get("n_items")
    if n is None:
        return DASH
    return str(n) if n_items is None else f"{n_items} ({n})"


# docs/metrics.md, "Test of Δ": one wording wherever Δ's p is printed.
DELTA_TEST = (
    "max-t test from the same bootstrap as Δ's interval: p < 1 − confidence exactly when the "
    "interval excludes 0"
)


def delta_family(rows: list[dict]) -> str:
    """The family of one source's Δ tests, said once under a table of them: what p and the
    interval span, what Holm adjusts across, what sets the flag."""
    tested = sum(1 for row in rows if row.get("delta_p") is not None)
    across = (
        f"the {tested} rows of this source (measures × attributes)"
        if tested == len(rows)
        else f"the {tested} of this source's {len(rows)} rows (measures × attributes) that have a p"
    )
    return (
        "p and the interval span the pairs of one attribute; p Holm adjusts p across "
        f"{across} and sets the flag."
    )


def delta_families(rows: list[dict]) -> str:
    """``delta_family`` for a table of several sources: each source's family size."""
    sizes = {}
    for row in rows:
        sizes[row["source"]] = sizes.get(row["source"], 0) + (row.get("delta_p") is not None)
    if len(sizes) == 1:
        return delta_family(rows)
    listed = ", ".join(f"{source} {n}" for source, n in sizes.items())
    return (
        "p and the interval span the pairs of one attribute; p Holm adjusts p across the rows "
        f"of the same source that have a p (measures × attributes: {listed}) and sets the flag."
    )


def ci_reason(row: dict, name: str) -> str:
    """Why ``name``'s interval is missing although ``name`` is defined ("" otherwise), so the
    reader sees the reason where "0.188 [0.188, 0.188]" would have stood."""
    if row.get(name) is None or row.get(f"{name}_ci_low") is not None:
        return ""
    reason = row.get(f"{name}_ci_reason")
    return f"no interval: {reason}" if reason else ""


def times(ratio) -> str:
    """A ratio as "3.1×" (a multiple of a baseline rate)."""
    return DASH if ratio is None else f"{ratio:.1f}×"


# docs/metrics.md, "Conventions": every interval and test defaults to 95 % and takes the level
# as a parameter. A document records its level (report.json ``settings.confidence``, the study
# export ``meta.confidence``); a hand-made one without either was built at the default.
DEFAULT_CONFIDENCE = 0.95


def confidence(document: dict) -> float:
    """The confidence level a report, a REFLECT part or a study export was computed at."""
    for key in ("settings", "meta"):
        block = document.get(key)
        if isinstance(block, dict) and block.get("confidence") is not None:
            return block["confidence"]
    return DEFAULT_CONFIDENCE


def level(value: float) -> str:
    """A confidence level as a label prints it: 0.95 → "95%", 0.9 → "90%", 0.975 → "97.5%"."""
    return f"{100 * value:.4g}%"


def confidence_label(document: dict) -> str:
    """``level(confidence(document))``: the "95%" of every "[95% CI]" label."""
    return level(confidence(document))


def interval_words(low, high, *, document: dict, digits: int = 2) -> str:
    """``95% CI 0.12 to 0.34`` at the document's level; "" without bounds."""
    if low is None or high is None:
        return ""
    return f"{confidence_label(document)} CI {number(low, digits)} to {number(high, digits)}"


class TableNotes:
    """The reasons a table's cells carry, said once under the table (docs/report.md, "Tables").

    A reason in a cell stretches its column until the columns after it leave the page; a cell
    gets a mark ("a", "b", …) instead, and the table's notes list each distinct reason once.
    """

    def __init__(self) -> None:
        self.reasons: list[str] = []

    def mark(self, reason: str | None) -> str:
        """The mark of ``reason`` (the same reason keeps its mark); "" for no reason."""
        if not reason:
            return ""
        if reason not in self.reasons:
            self.reasons.append(reason)
        return _letters(self.reasons.index(reason))

    @property
    def items(self) -> list[dict]:
        """``[{"mark", "text"}]`` in the order the marks were given."""
        return [{"mark": _letters(i), "text": text} for i, text in enumerate(self.reasons)]


def _letters(index: int) -> str:
    """0 → a, 25 → z, 26 → aa: letters, never digits, so a mark beside a number is not read as
    an exponent or a footnote digit of the number."""
    text = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        text = chr(ord("a") + rest) + text
    return text


# Where Δ = 0 every value has the same rate: naming one value as both the highest and the lowest
# ("hijab · hijab") would say that one is higher.
NO_VALUE_HIGHER = "no value is higher"
NO_VALUE_LOWER = "no value is lower"


def tied(max_value, min_value, delta) -> bool:
    """Δ = 0: every value has the same rate, none is the highest."""
    return (delta is not None and delta == 0) or (max_value is not None and max_value == min_value)


def extremes(max_value, min_value, delta) -> tuple[str, str]:
    """The highest and the lowest value of a Δ as separate cells print them."""
    if tied(max_value, min_value, delta):
        return NO_VALUE_HIGHER, NO_VALUE_LOWER
    return max_value or DASH, min_value or DASH


def highest_lowest(max_value, min_value, delta) -> str:
    """``hijab · kippah`` (highest · lowest), or "no value is higher (all equal)" where Δ = 0."""
    if tied(max_value, min_value, delta):
        return f"{NO_VALUE_HIGHER} (all equal)"
    return f"{max_value or DASH} · {min_value or DASH}"


def marked(cell: dict, notes: TableNotes) -> dict:
    """A ``{"text", "reason"}`` cell with the mark of its reason in ``notes`` (``mark``)."""
    return {**cell, "mark": notes.mark(cell.get("reason"))}


def source_label(source: str) -> str:
    """A source as prose names it: "human annotators", "judge sim-vlm-a@1" (not "auto:…")."""
    return "human annotators" if source == "human" else f"judge {source.removeprefix('auto:')}"


def cell_label(source: str, measure: str, attribute: str, value: str | None = None) -> str:
    """One rate's or fit's place in prose: "judge sim-vlm-b@1 · combined outcome · culture:
    Nigerian", never the internal "auto:sim-vlm-b@1 · combined · culture=Nigerian"."""
    where = f"{source_label(source)} · {measure} outcome · {attribute}"
    return where if value is None else f"{where}: {value}"
