"""The REFLECT part's sentences: what was audited, the headline findings, the limitations and
the legal mapping's evidence lines, each built from the part's stored numbers (Django-free).

Nothing is typed in per face set; a value that is undefined (None in the part) is said to be
undefined, with its reason, never shown as a number.
"""

from __future__ import annotations

from scoring.report.display import counted, interval, level, number, percent
from scoring.report.document_types import (
    ByKind,
    Interval,
    IntervalsByKind,
    ReflectPart,
    TwoAfcCell,
    cell_intervals,
    group_interval,
    mcq_cells,
    salary_block,
    two_afc_cells,
)

HEADLINE_GAPS = 3
MIN_TEMPLATES = 5  # fewer templates per occupation: the template bootstrap has few distinct draws
KINDS = ("race", "gender", "race_gender")


def _with_ci(value, ci: Interval | None, digits: int = 2) -> str:
    if value is None:
        return "undefined"
    low, high = (ci or [None, None])[:2]
    shown = number(value, digits)
    return shown if low is None or high is None else f"{shown} {interval(low, high, digits)}"


def moment(text: str | None) -> str:
    """An ISO time to the second, as read (``2026-11-23 13:57:35``; the answers store UTC)."""
    return text[:19].replace("T", " ") if text else "—"


def _group(label: str) -> str:
    return label.replace("|", " ")


# --- what was audited -----------------------------------------------------------------------


def audited(part: ReflectPart) -> list[str]:
    face_set, answers = part["face_set"], part["answers"]
    counts = face_set["counts"]
    described = f"REFLECT face set “{face_set['name']}”: " + ", ".join(
        [counted(counts["occupations"], "occupation"), counted(counts["templates"], "template")]
    )
    if "images_by_variant" in counts:  # the face set's records (not when read from dumps)
        images = counts["images_by_variant"]
        described += (
            ", images "
            + (", ".join(f"{n} {variant}" for variant, n in sorted(images.items())) or "none")
            + f" ({counts['images_rejected']} rejected by QC), "
            f"{counts['biographies_accepted']} of {counts['biographies']} biographies accepted"
        )
    out = [described + "."]
    if face_set.get("description"):  # e.g. the demo set's SYNTHETIC DEMO notice
        out.append(f"About the face set: {face_set['description']}")
    for run in part["runs"]:
        decoding = ", ".join(f"{k} {v}" for k, v in sorted((run["decoding"] or {}).items()))
        # A run with no answer stored yet is not among the answer counts.
        answered = answers["by_model"][run["model"]] if run["model"] in answers["by_model"] else {}
        out.append(
            f"VLM audited: {run['model']} ({run['model_name']}; decoding "
            f"{decoding or 'backend defaults'}; prompt version {run['prompt_version']}"
            f"{'; MCQ with explanations' if run['explain'] else ''}): "
            + (", ".join(f"{n} {task}" for task, n in sorted(answered.items())) or "no")
            + " answers."
        )
    if not part["runs"]:
        models = sorted(answers["by_model"])
        out.append(f"Models in the answers: {', '.join(models) or 'none'}.")
    settings = part["settings"]
    out.append(
        f"{answers['n_answers']} stored answers ("
        + ", ".join(f"{n} {status}" for status, n in answers["by_status"].items())
        + f"), recorded {moment(answers['answered_from'])} to "
        f"{moment(answers['answered_to'])}; intervals: "
        f"{level(settings['confidence'])} template-cluster bootstrap, "
        f"{settings['n_resamples']} resamples, seed {settings['seed']}."
    )
    return out


# --- headline findings ----------------------------------------------------------------------


def win_rate_gaps(part: ReflectPart) -> list[dict]:
    """Per model × scenario × kind: the highest and lowest win rate with their intervals and
    the all-trials rates beside them, largest gap first (undefined rates left out)."""
    rows = []
    for model, block in sorted(part["models"].items()):
        for scenario, cell in sorted(two_afc_cells(block).items()):
            for kind in KINDS:
                rates = {k: v for k, v in cell["win_rate"][kind].items() if v is not None}
                if len(rates) < 2:
                    continue
                high = max(rates, key=lambda k: (rates[k], k))
                low = min(rates, key=lambda k: (rates[k], k))
                rows.append(
                    {
                        "model": model,
                        "scenario": scenario,
                        "kind": kind,
                        "high": high,
                        "low": low,
                        "gap": rates[high] - rates[low],
                        "cell": cell,
                    }
                )
    return sorted(rows, key=lambda r: (-r["gap"], r["model"], r["scenario"], r["kind"]))


def _rate_words(cell: TwoAfcCell, kind: str, label: str) -> str:
    text = _with_ci(
        cell["win_rate"][kind][label],
        group_interval(cell_intervals(cell, "win_rate"), kind, label),
    )
    all_trials = cell["win_rate_all_trials"].get(kind)  # no race_gender kind
    if all_trials is not None and label in all_trials:
        ci = group_interval(cell_intervals(cell, "win_rate_all_trials"), kind, label)
        text += f" (all trials {_with_ci(all_trials[label], ci)})"
    return text


def gap_sentence(row: dict) -> str:
    cell, kind = row["cell"], row["kind"]
    return (
        f"{row['model']}, 2AFC {row['scenario']} ({kind.replace('_', ' × ')}): win rate of "
        f"{_group(row['high'])} {_rate_words(cell, kind, row['high'])} against "
        f"{_group(row['low'])} {_rate_words(cell, kind, row['low'])}; gap {number(row['gap'], 2)} "
        f"over {cell['kept']} kept comparisons."
    )


def findings(part: ReflectPart) -> list[str]:
    models = part["models"]
    if not models:
        return ["No answers yet: nothing to examine."]
    out = [gap_sentence(row) for row in win_rate_gaps(part)[:HEADLINE_GAPS]]
    for model, block in sorted(models.items()):
        parts = []
        polarisation = [
            f"{scenario} {_with_ci(cell['pol'], cell_intervals(cell, 'pol'))}"
            for scenario, cell in sorted(two_afc_cells(block).items())
        ]
        if polarisation:
            parts.append(f"polarization Pol {', '.join(polarisation)}")
        for question, cell in sorted(mcq_cells(block).items()):
            top = _largest(cell["jsd"], cell_intervals(cell, "jsd"), ("race", "gender"))
            if top:
                label, kind, value, ci = top
                parts.append(
                    f"MCQ {question} largest JSD {_group(label)} ({kind}) {_with_ci(value, ci, 3)} "
                    f"bits ({cell['valid']} valid)"
                )
        salary = salary_block(block)
        if salary is not None:
            gap_intervals = cell_intervals(salary, "gap_mean")
            top = _largest(
                salary["gap_mean"]["all"],
                None if gap_intervals is None else gap_intervals["all"],
                ("race", "gender"),
            )
            if top:
                label, kind, value, ci = top
                parts.append(
                    f"salary largest mean gap {_group(label)} ({kind}) {_with_ci(value, ci, 1)} % "
                    f"against the reference group ({salary['valid']} valid)"
                )
        if parts:
            out.append(f"{model}: " + "; ".join(parts) + ".")
    return out


def _largest(values: ByKind, intervals: IntervalsByKind | None, kinds) -> tuple | None:
    """(label, kind, value, ci) of the largest absolute value, or None when none is defined."""
    found = [
        (label, kind, value, group_interval(intervals, kind, label))
        for kind in kinds
        for label, value in values[kind].items()
        if value is not None
    ]
    return max(found, key=lambda f: (abs(f[2]), f[0])) if found else None


# --- limitations: what the evidence cannot support ------------------------------------------


def limitations(part: ReflectPart) -> list[dict]:
    """The part's stated limitations, ``{"kind", "text"}``, from its numbers (``part`` has no
    ``limitations`` yet: ``reflect_part`` adds these)."""
    out = []
    settings = part["settings"]
    min_n = settings["min_n"]
    # No 2AFC answers: no discard table.
    table = part["discard_table"]["all"] if "discard_table" in part else None
    if table:
        out.append(
            _item(
                "discards",
                (
                    f"{table['attempted'] - table['kept']} of {table['attempted']} 2AFC comparisons "
                    f"({percent(table['discard_rate'])}) were discarded: {table['discarded_invalid']} "
                    f"invalid, {table['discarded_refusal']} refused, {table['discarded_inconsistent']} "
                    "inconsistent between the two presentations. Win rates and all-trials rates count "
                    "kept comparisons only; the first-position rate counts every valid answer."
                ),
            )
        )
    errors = part["answers"]["by_status"].get("error", 0)
    if errors:
        out.append(
            _item(
                "errors",
                f"{errors} requests failed in transport and count nowhere; "
                "running run_reflect again asks exactly those.",
            )
        )
    incomplete = _incomplete_runs(part)
    if incomplete:
        out.append(
            _item(
                "incomplete",
                "Runs not finished (answered of planned): " + "; ".join(incomplete) + ".",
            )
        )
    small = _small_cells(part, min_n)
    if small:
        out.append(
            _item(
                "small_cells",
                f"Fewer than {min_n} kept comparisons or valid answers: "
                + "; ".join(small)
                + ". Their intervals are wide.",
            )
        )
    few = _few_templates(part)
    if few:
        out.append(
            _item(
                "few_templates",
                (
                    f"Fewer than {MIN_TEMPLATES} templates per occupation ({few}): the template bootstrap "
                    "has few distinct resamples, so intervals understate the uncertainty."
                ),
            )
        )
    if not settings["n_resamples"]:
        out.append(_item("no_intervals", "No bootstrap (0 resamples): no intervals are given."))
    undefined = undefined_values(part)
    if undefined:
        shown = "; ".join(f"{path} ({reason})" for path, reason in undefined[:6])
        more = f" … ({len(undefined)} in all)" if len(undefined) > 6 else ""
        out.append(_item("undefined", f"Undefined statistics, shown as null: {shown}{more}."))
    out.append(
        _item(
            "scope",
            (
                "The evidence is the listed models' behaviour on these edited faces and prompts; "
                "differences may also come from editing artefacts, and do not show how a deployed hiring "
                "or pay system that embeds the model decides."
            ),
        )
    )
    return out


def _item(kind: str, text: str) -> dict:
    return {"kind": kind, "text": text}


def _incomplete_runs(part: ReflectPart) -> list[str]:
    out = []
    for run in part["runs"]:
        for task, progress in sorted(run["progress"].items()):
            if progress["planned"] and progress["answered"] < progress["planned"]:
                out.append(f"{run['model']} {task} {progress['answered']} of {progress['planned']}")
    return out


def _small_cells(part: ReflectPart, min_n: int) -> list[str]:
    out = []
    for model, block in sorted(part["models"].items()):
        for scenario, cell in sorted(two_afc_cells(block).items()):
            if cell["kept"] < min_n:
                out.append(f"{model} 2AFC {scenario} ({cell['kept']} kept)")
        for question, cell in sorted(mcq_cells(block).items()):
            if cell["valid"] < min_n:
                out.append(f"{model} MCQ {question} ({cell['valid']} valid)")
        salary = salary_block(block)
        if salary is not None and salary["valid"] < min_n:
            out.append(f"{model} salary ({salary['valid']} valid)")
    return out


def _few_templates(part: ReflectPart) -> str:
    counts = part["face_set"]["counts"]
    occupations, templates = counts["occupations"], counts["templates"]
    if occupations and templates / occupations < MIN_TEMPLATES:
        return f"{templates} templates in {occupations} occupations"
    return ""


def undefined_values(part: ReflectPart) -> list[tuple[str, str]]:
    """(path, reason) of every headline statistic that is null."""
    out = []
    for model, block in sorted(part["models"].items()):
        for scenario, cell in sorted(two_afc_cells(block).items()):
            reason = (
                "no comparison kept"
                if not cell["kept"]
                else "no kept comparison involves the group"
            )
            for name in ("pol", "ext", "first_position_rate"):
                if cell[name] is None:
                    out.append((f"{model}.2afc.{scenario}.{name}", reason))
            for kind in KINDS:
                for label, value in sorted(cell["win_rate"][kind].items()):
                    if value is None:
                        out.append((f"{model}.2afc.{scenario}.win_rate.{kind}.{label}", reason))
        for question, cell in sorted(mcq_cells(block).items()):
            for kind in ("race", "gender"):
                for label, value in sorted(cell["jsd"][kind].items()):
                    if value is None:
                        out.append(
                            (
                                f"{model}.mcq.{question}.jsd.{kind}.{label}",
                                "no valid answer for the group",
                            )
                        )
    return out


# --- the legal mapping's evidence lines ------------------------------------------------------


def _design(part: ReflectPart) -> str:
    counts = part["face_set"]["counts"]
    return (
        f"REFLECT: face set {part['face_set']['name']}, "
        f"{counts['occupations']} occupations, {counts['templates']} templates × 10 "
        f"race × gender groups; {len(part['models'])} model(s), "
        f"{part['answers']['n_answers']} answers."
    )


def _measures(part: ReflectPart) -> str:
    return (
        "REFLECT: 2AFC win rates (kept comparisons and all trials), polarization Pol and Ext, "
        "MCQ JSD and mean gaps, salary gaps and clustered OLS, with a template-cluster bootstrap "
        f"({part['settings']['n_resamples']} resamples)."
    )


def _disparities(part: ReflectPart) -> str:
    models = part["models"].values()
    blocks = {
        "2afc": sum(len(two_afc_cells(b)) for b in models),
        "mcq": sum(len(mcq_cells(b)) for b in models),
    }
    salaries = sum(1 for b in models if salary_block(b) is not None)
    gaps = win_rate_gaps(part)
    largest = f"; largest win-rate gap {number(gaps[0]['gap'], 2)}" if gaps else ""
    return (
        f"REFLECT: {blocks['2afc']} 2AFC scenario, {blocks['mcq']} MCQ question and {salaries} "
        f"salary blocks examined{largest}."
    )


def _regression(part: ReflectPart) -> str:
    salaries = (salary_block(b) for b in part["models"].values())
    fits = sum(len(salary["ols"]) for salary in salaries if salary is not None)
    return f"REFLECT: {fits} clustered OLS fits of salary on race and gender."


def _limitations(part: ReflectPart) -> str:
    return f"REFLECT: {len(part['limitations'])} stated limitations."


def _data_statement(part: ReflectPart) -> str:
    counts = part["face_set"]["counts"]
    # Answers read from dumps carry no face-set records: nothing rejected or checked here.
    return (
        f"REFLECT: {counts.get('images_rejected', 0)} face images rejected by QC; "
        f"{counts.get('biographies_accepted', 0)} of {counts.get('biographies', 0)} biographies "
        "passed the demographic-leakage check; every answer with its image hashes is exported."
    )


def _recomputable(part: ReflectPart) -> str:
    return "REFLECT: the folder holds every answer; verify_report recomputes the REFLECT numbers."


# Evidence of each kind the REFLECT part can give; kinds it has none of (annotators, human
# validation) are absent.
EVIDENCE = {
    "design": _design,
    "measures": _measures,
    "disparities": _disparities,
    "regression": _regression,
    "limitations": _limitations,
    "data_statement": _data_statement,
    "recomputable": _recomputable,
}
# Where each kind of REFLECT evidence sits in the document (anchors in report_reflect.html).
SECTIONS = {
    "design": "reflect-design",
    "measures": "reflect-measures",
    "disparities": "reflect-findings",
    "regression": "reflect-findings",
    "limitations": "reflect-limitations",
    "data_statement": "reflect-design",
    "recomputable": "provenance",
}
