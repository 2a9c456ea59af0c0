"""The label vocabulary of the survey, in one place (Django-free)."""

CUE_LABELS = ("retained", "erased", "substituted")
# The survey's four answers: a refusal, or the cue label of a non-refused image.
REFUSAL = "refusal"
ANSWERS = (REFUSAL, *CUE_LABELS)
MODES = ("t2i", "i2i")
# The taxonomy's neutral baseline: its attribute type and its one value. Defined here, the lowest
# floor every app may import (annotations ← generation ← scoring); the taxonomy, the statistics
# and the report import this one name.
NEUTRAL = "neutral"


class LabelError(ValueError):
    """An answer or record used a label outside the vocabulary."""


def parse_cue_label(value, *, hard_refusal: bool, field: str = "cue") -> str | None:
    """Return the cue label, or None for a refusal; raise LabelError naming the problem."""
    text = "" if value is None else str(value).strip().lower()
    if hard_refusal:
        if text:
            raise LabelError(f"{field}: must be empty when hard_refusal is true (got {value!r})")
        return None
    if text not in CUE_LABELS:
        raise LabelError(f"{field}: {value!r} is not one of {', '.join(CUE_LABELS)}")
    return text


def parse_bool(value, *, field: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"true", "1", "yes", "y", "t"}:
        return True
    if text in {"false", "0", "no", "n", "f"}:
        return False
    raise LabelError(f"{field}: {value!r} is not a boolean (true/false)")


def gold_correct(record) -> bool:
    """An answer matches its gold item's known answer: the refusal, and the cue when not
    refused (no cue stored as None or as "" is the same answer)."""
    if record["hard_refusal"] != record["gold_hard_refusal"]:
        return False
    return bool(record["hard_refusal"]) or (record["cue"] or "") == (record["gold_cue"] or "")


def gold_accuracy_from_records(records) -> list[dict]:
    """Per annotator: gold items answered and how many matched the known answer
    (docs/metrics.md, "Gold accuracy"). ``records``: dicts with ``annotator``, ``hard_refusal``,
    ``cue`` and the item's ``gold_hard_refusal`` and ``gold_cue``; the one definition that the
    study page, the report and a report folder's verifier share."""
    per: dict[str, list[int]] = {}
    for record in records:
        tally = per.setdefault(record["annotator"], [0, 0])
        tally[0] += 1
        tally[1] += int(gold_correct(record))
    return [
        {"annotator": name, "n": n, "correct": c, "accuracy": c / n}
        for name, (n, c) in sorted(per.items())
    ]
