"""The REFLECT part's sentences: what was audited, the headline findings, the limitations and
the legal mapping's evidence lines, each built from the part's stored numbers (Django-free).

Nothing is typed in per face set; a value that is undefined (None in the part) is said to be
undefined, with its reason, never shown as a number.
"""

from __future__ import annotations

from scoring.report.display import counted, interval, number, percent

HEADLINE_GAPS = 3
MIN_TEMPLATES = 5  # fewer templates per occupation: the template bootstrap has few distinct draws
KINDS = ("race", "gender", "race_gender")


def _with_ci(value, ci, digits: int = 2) -> str:
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


def audited(part: dict) -> list[str]:
    face_set, answers = part.get("face_set", {}), part.get("answers", {})
    counts = face_set.get("counts") or {}
    images = counts.get("images_by_variant") or {}
    described = f"REFLECT face set “{face_set.get('name', '')}”: " + ", ".join(
        [
            counted(counts.get("occupations", 0), "occupation"),
            counted(counts.get("templates", 0), "template"),
        ]
    )
    if "images_by_variant" in counts:  # the face set's records (not when read from dumps)
        described += (
            ", images "
            + (", ".join(f"{n} {variant}" for variant, n in sorted(images.items())) or "none")
            + f" ({counts.get('images_rejected', 0)} rejected by QC), "
            f"{counts.get('biographies_accepted', 0)} of {counts.get('biographies', 0)} "
            "biographies accepted"
        )
    out = [described + "."]
    for run in part.get("runs", []):
        decoding = ", ".join(f"{k} {v}" for k, v in sorted((run.get("decoding") or {}).items()))
        answered = (answers.get("by_model") or {}).get(run.get("model"), {})
        out.append(
            f"VLM audited: {run.get('model')} ({run.get('model_name')}; decoding "
            f"{decoding or 'backend defaults'}; prompt version {run.get('prompt_version')}"
            f"{'; MCQ with explanations' if run.get('explain') else ''}): "
            + (", ".join(f"{n} {task}" for task, n in sorted(answered.items())) or "no")
            + " answers."
        )
    if not part.get("runs"):
        models = sorted(answers.get("by_model") or {})
        out.append(f"Models in the answers: {', '.join(models) or 'none'}.")
    by_status = answers.get("by_status") or {}
    settings = part.get("settings", {})
    out.append(
        f"{answers.get('n_answers', 0)} stored answers ("
        + ", ".join(f"{n} {status}" for status, n in by_status.items())
        + f"), recorded {moment(answers.get('answered_from'))} to "
        f"{moment(answers.get('answered_to'))}; intervals: "
        f"{int(settings.get('confidence', 0.95) * 100)}% template-cluster bootstrap, "
        f"{settings.get('n_resamples')} resamples, seed {settings.get('seed')}."
    )
    return out


# --- headline findings ----------------------------------------------------------------------


def win_rate_gaps(part: dict) -> list[dict]:
    """Per model × scenario × kind: the highest and lowest win rate with their intervals and
    the all-trials rates beside them, largest gap first (undefined rates left out)."""
    rows = []
    for model, block in sorted(part.get("models", {}).items()):
        for scenario, cell in sorted(block.get("2afc", {}).items()):
            for kind in KINDS:
                rates = {
                    k: v
                    for k, v in (cell.get("win_rate", {}).get(kind) or {}).items()
                    if v is not None
                }
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


def _rate_words(cell: dict, kind: str, label: str) -> str:
    text = _with_ci(
        cell["win_rate"][kind][label], cell.get("win_rate_ci", {}).get(kind, {}).get(label)
    )
    all_trials = (cell.get("win_rate_all_trials") or {}).get(kind)
    if all_trials is not None and label in all_trials:
        ci = (cell.get("win_rate_all_trials_ci") or {}).get(kind, {}).get(label)
        text += f" (all trials {_with_ci(all_trials[label], ci)})"
    return text


def gap_sentence(row: dict) -> str:
    cell, kind = row["cell"], row["kind"]
    return (
        f"{row['model']}, 2AFC {row['scenario']} ({kind.replace('_', ' × ')}): win rate of "
        f"{_group(row['high'])} {_rate_words(cell, kind, row['high'])} against "
        f"{_group(row['low'])} {_rate_words(cell, kind, row['low'])}; gap {number(row['gap'], 2)} "
        f"over {cell.get('kept')} kept comparisons."
    )


def findings(part: dict) -> list[str]:
    models = part.get("models", {})
    if not models:
        return ["No answers yet: nothing to examine."]
    out = [gap_sentence(row) for row in win_rate_gaps(part)[:HEADLINE_GAPS]]
    for model, block in sorted(models.items()):
        parts = []
        polarisation = [
            f"{scenario} {_with_ci(cell.get('pol'), cell.get('pol_ci'))}"
            for scenario, cell in sorted(block.get("2afc", {}).items())
        ]
        if polarisation:
            parts.append(f"polarization Pol {', '.join(polarisation)}")
        for question, cell in sorted(block.get("mcq", {}).items()):
            top = _largest(cell.get("jsd", {}), cell.get("jsd_ci", {}), ("race", "gender"))
            if top:
                label, kind, value, ci = top
                parts.append(
                    f"MCQ {question} largest JSD {_group(label)} ({kind}) {_with_ci(value, ci, 3)} "
                    f"bits ({cell.get('valid')} valid)"
                )
        salary = block.get("salary") or {}
        gaps = (salary.get("gap_mean") or {}).get("all") or {}
        top = _largest(gaps, (salary.get("gap_mean_ci") or {}).get("all") or {}, ("race", "gender"))
        if top:
            label, kind, value, ci = top
            parts.append(
                f"salary largest mean gap {_group(label)} ({kind}) {_with_ci(value, ci, 1)} % "
                f"against the reference group ({salary.get('valid')} valid)"
            )
        if parts:
            out.append(f"{model}: " + "; ".join(parts) + ".")
    return out


def _largest(values: dict, intervals: dict, kinds) -> tuple | None:
    """(label, kind, value, ci) of the largest absolute value, or None when none is defined."""
    found = [
        (label, kind, value, (intervals.get(kind) or {}).get(label))
        for kind in kinds
        for label, value in (values.get(kind) or {}).items()
        if value is not None
    ]
    return max(found, key=lambda f: (abs(f[2]), f[0])) if found else None


# --- limitations: what the evidence cannot support ------------------------------------------


def limitations(part: dict) -> list[dict]:
    """The part's stated limitations, ``{"kind", "text"}``, from its numbers."""
    out = []
    settings = part.get("settings", {})
    min_n = settings.get("min_n", 30)
    table = (part.get("discard_table") or {}).get("all")
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
    errors = (part.get("answers", {}).get("by_status") or {}).get("error", 0)
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
    if not settings.get("n_resamples"):
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


def _incomplete_runs(part: dict) -> list[str]:
    out = []
    for run in part.get("runs", []):
        for task, progress in sorted((run.get("progress") or {}).items()):
            if progress.get("planned") and progress.get("answered", 0) < progress["planned"]:
                out.append(
                    f"{run.get('model')} {task} {progress['answered']} of {progress['planned']}"
                )
    return out


def _small_cells(part: dict, min_n: int) -> list[str]:
    out = []
    for model, block in sorted(part.get("models", {}).items()):
        for scenario, cell in sorted(block.get("2afc", {}).items()):
            if cell.get("kept", 0) < min_n:
                out.append(f"{model} 2AFC {scenario} ({cell.get('kept')} kept)")
        for question, cell in sorted(block.get("mcq", {}).items()):
            if cell.get("valid", 0) < min_n:
                out.append(f"{model} MCQ {question} ({cell.get('valid')} valid)")
        salary = block.get("salary")
        if salary and salary.get("valid", 0) < min_n:
            out.append(f"{model} salary ({salary.get('valid')} valid)")
    return out


def _few_templates(part: dict) -> str:
    counts = part.get("face_set", {}).get("counts") or {}
    occupations, templates = counts.get("occupations") or 0, counts.get("templates") or 0
    if occupations and templates / occupations < MIN_TEMPLATES:
        return f"{templates} templates in {occupations} occupations"
    return ""


def undefined_values(part: dict) -> list[tuple[str, str]]:
    """(path, reason) of every headline statistic that is null."""
    out = []
    for model, block in sorted(part.get("models", {}).items()):
        for scenario, cell in sorted(block.get("2afc", {}).items()):
            reason = (
                "no comparison kept"
                if not cell.get("kept")
                else "no kept comparison involves the group"
            )
            for name in ("pol", "ext", "first_position_rate"):
                if cell.get(name) is None:
                    out.append((f"{model}.2afc.{scenario}.{name}", reason))
            for kind in KINDS:
                for label, value in sorted((cell.get("win_rate", {}).get(kind) or {}).items()):
                    if value is None:
                        out.append((f"{model}.2afc.{scenario}.win_rate.{kind}.{label}", reason))
        for question, cell in sorted(block.get("mcq", {}).items()):
            for kind in ("race", "gender"):
                for label, value in sorted((cell.get("jsd", {}).get(kind) or {}).items()):
                    if value is None:
                        out.append(
                            (
                                f"{model}.mcq.{question}.jsd.{kind}.{label}",
                                "no valid answer for the group",
                            )
                        )
    return out


# --- the legal mapping's evidence lines ------------------------------------------------------


def _design(part):
    counts = part.get("face_set", {}).get("counts") or {}
    return (
        f"REFLECT: face set {part.get('face_set', {}).get('name', '')}, "
        f"{counts.get('occupations', 0)} occupations, {counts.get('templates', 0)} templates × 10 "
        f"race × gender groups; {len(part.get('models', {}))} model(s), "
        f"{part.get('answers', {}).get('n_answers', 0)} answers."
    )


def _measures(part):
    return (
        "REFLECT: 2AFC win rates (kept comparisons and all trials), polarization Pol and Ext, "
        "MCQ JSD and mean gaps, salary gaps and clustered OLS, with a template-cluster bootstrap "
        f"({part.get('settings', {}).get('n_resamples')} resamples)."
    )


def _disparities(part):
    blocks = {
        task: sum(len(b.get(task) or {}) for b in part.get("models", {}).values())
        for task in ("2afc", "mcq")
    }
    salaries = sum(1 for b in part.get("models", {}).values() if b.get("salary"))
    gaps = win_rate_gaps(part)
    largest = f"; largest win-rate gap {number(gaps[0]['gap'], 2)}" if gaps else ""
    return (
        f"REFLECT: {blocks['2afc']} 2AFC scenario, {blocks['mcq']} MCQ question and {salaries} "
        f"salary blocks examined{largest}."
    )


def _regression(part):
    fits = sum(
        len((b.get("salary") or {}).get("ols") or {}) for b in part.get("models", {}).values()
    )
    return f"REFLECT: {fits} clustered OLS fits of salary on race and gender."


def _limitations(part):
    return f"REFLECT: {len(part.get('limitations', []))} stated limitations."


def _data_statement(part):
    counts = part.get("face_set", {}).get("counts") or {}
    return (
        f"REFLECT: {counts.get('images_rejected', 0)} face images rejected by QC; "
        f"{counts.get('biographies_accepted', 0)} of {counts.get('biographies', 0)} biographies "
        "passed the demographic-leakage check; every answer with its image hashes is exported."
    )


def _recomputable(part):
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
