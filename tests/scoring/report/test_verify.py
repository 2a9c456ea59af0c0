"""A report folder is recomputable (Django-free): an untouched folder verifies, one changed raw
row fails it even when the forger rewrites the manifest's hashes, and the standalone verifier
imports no Django."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.report import bundle
from scoring.report.verify import differences, main, verify_folder
from scoring.stats.synthetic_study import synthetic_study

ROOT = Path(__file__).resolve().parents[3]
SETTINGS = {"n_resamples": 50, "n_permutations": 50, "seed": 2}


def records(frame) -> list[dict]:
    return json.loads(frame.to_json(orient="records"))


@pytest.fixture(scope="module")
def inputs():
    annotations, judgments = synthetic_study(n_items=240, n_annotated_items=60, overlap=2, seed=9)
    answers = [
        {
            **row,
            "is_gold": False,
            "batch": "b1",
            "seconds_to_answer": 5.0 + i % 7,
            "too_fast": False,
        }
        for i, row in enumerate(records(annotations))
    ]
    gold = [
        {
            **answers[0],
            "item_id": f"gold-{n}",
            "is_gold": True,
            "hard_refusal": False,
            "cue": "retained",
            "gold_hard_refusal": False,
            "gold_cue": "retained" if n else "erased",
        }
        for n in range(2)
    ]
    items = [
        {
            "item_id": row["item_id"],
            "attribute": row["attribute"],
            "value": row["attribute_value"],
            "base_prompt_id": row["base_prompt_id"],
            "domain": row["domain"],
            "generator": row["generator"],
            "mode": row["mode"],
        }
        for row in {row["item_id"]: row for row in records(judgments)}.values()
    ]
    return {
        "annotations": answers + gold,
        "judgments": records(judgments),
        "planned_prompts": [],
        "items": items,
        "judgment_log": [
            {
                "item_id": row["item_id"],
                "judge": row["judge"],
                "judge_version": "1",
                "failed": False,
            }
            for row in records(judgments)
        ],
        "context": {
            "attribute_values": [
                {"attribute": attribute, "value": value, "cue_description": "", "is_neutral": False}
                for attribute, value in sorted({(i["attribute"], i["value"]) for i in items})
            ],
            "study": {"slug": "s", "name": "S", "system_kind": "general_purpose"},
            "references": {},
            "settings": SETTINGS,
            "data_fingerprint": "fp",
            "batches": [{"name": "b1", "policy": "k_overlap", "overlap_k": 2, "seed": 1}],
            "guidelines": {"sha256": "0" * 64, "text": "Guidelines."},
            "plan": None,
        },
    }


@pytest.fixture(scope="module")
def report(inputs):
    return bundle.report_from_inputs(inputs, generated_at="2026-01-01T00:00:00+00:00")


def write_folder(folder: Path, inputs: dict, report: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / bundle.REPORT).write_text(json.dumps(report, indent=2), encoding="utf-8")
    bundle.write_inputs(folder, inputs)
    bundle.write_manifest(
        folder, argv=["audit_report", "--seed", "2"], settings=SETTINGS, seeds={"report": 2}
    )
    return folder


def flip_first_refusal(folder: Path) -> None:
    path = folder / bundle.ROW_FILES["annotations"]
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[0])
    row["hard_refusal"] = not row["hard_refusal"]
    row["cue"] = None if row["hard_refusal"] else "retained"
    lines[0] = json.dumps(row, sort_keys=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_report_carries_the_new_sections(report):
    assert report["legal"]["system_kind"] == "general_purpose"
    assert (
        report["people"]["groups"] and report["people"]["batches"][0]["n_answers"] == 122
    )  # 120 + 2 gold
    assert report["data_statement"]["has_plan"] is False
    assert sum(row["n_items"] for row in report["design"]["taxonomy"]) == 240
    assert report["design"]["judges"][0]["n_judgments"] == 240
    # Gold answers count for gold accuracy only: one of the two gold answers is right.
    assert report["validation"]["gold_accuracy"] == [
        {"annotator": "annotator-00", "n": 2, "correct": 1, "accuracy": 0.5}
    ]


def test_an_untouched_folder_verifies(tmp_path, inputs, report, capsys):
    folder = write_folder(tmp_path / "r", inputs, report)
    manifest = json.loads((folder / bundle.MANIFEST).read_text())
    assert set(manifest["files"]) == {
        "report.json",
        *bundle.ROW_FILES.values(),
        bundle.CONTEXT_FILE,
    }
    assert manifest["command"] == "audit_report --seed 2" and manifest["packages"]["numpy"]
    assert verify_folder(folder) == ([], [])
    assert main([str(folder)]) == 0
    assert capsys.readouterr().out.startswith("OK:")


def test_one_changed_row_fails_by_hash_and_by_number(tmp_path, inputs, report, capsys):
    folder = write_folder(tmp_path / "r", inputs, report)
    flip_first_refusal(folder)
    mismatches, _ = verify_folder(folder)
    assert mismatches[0].startswith("hash mismatch: data/annotations.jsonl")
    assert any(line.startswith("mismatch: rates.human.refusal") for line in mismatches)
    assert main([str(folder)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith("FAILED:") and len(out) == len(mismatches) + 1


def test_a_rewritten_manifest_does_not_hide_a_changed_row(tmp_path, inputs, report):
    folder = write_folder(tmp_path / "r", inputs, report)
    flip_first_refusal(folder)
    bundle.write_manifest(folder, argv=["forged"], settings=SETTINGS, seeds={})
    mismatches, _ = verify_folder(folder)
    assert mismatches and not any(line.startswith("hash mismatch") for line in mismatches)
    assert any("counts.n_refused" in line or "rates.human" in line for line in mismatches)


def test_a_changed_number_in_report_json_fails(tmp_path, inputs, report):
    changed = json.loads(json.dumps(report))
    changed["disparities"][0]["delta"] = (changed["disparities"][0]["delta"] or 0) + 0.01
    folder = write_folder(tmp_path / "r", inputs, changed)
    mismatches, _ = verify_folder(folder)
    assert mismatches == [
        f"mismatch: disparities[0].delta: report.json has {changed['disparities'][0]['delta']!r}, "
        f"recomputed {report['disparities'][0]['delta']!r}"
    ]


def test_an_unreadable_folder_is_one_line_and_exit_2(tmp_path, capsys):
    assert main([str(tmp_path / "nowhere")]) == 2
    assert capsys.readouterr().err.strip() == f"error: {tmp_path / 'nowhere'}: not a folder"
    (tmp_path / "r").mkdir()
    assert main([str(tmp_path / "r")]) == 2
    assert "manifest.json: missing" in capsys.readouterr().err


def test_differences_compare_floats_to_a_relative_tolerance():
    assert list(differences({"a": [1.0, True]}, {"a": [1.0 + 1e-12, True]})) == []
    assert list(differences({"a": True}, {"a": 1})) == [("a", True, 1)]
    assert list(differences({"a": [1]}, {"a": [1, 2]})) == [("a (length)", 1, 2)]


def verify_without_django(folder: Path) -> subprocess.CompletedProcess:
    """``python -m scoring.report.verify FOLDER`` in a fresh interpreter that fails if anything
    imports Django (also used by the REFLECT report's tests)."""
    code = (
        "import sys, runpy; sys.argv = ['verify', sys.argv[1]]\n"
        "try:\n    runpy.run_module('scoring.report.verify', run_name='__main__')\n"
        "except SystemExit as e:\n    assert 'django' not in sys.modules, 'django imported'\n"
        "    raise\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    return subprocess.run(
        [sys.executable, "-c", code, str(folder)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_standalone_verifier_needs_no_django(tmp_path, inputs, report):
    folder = write_folder(tmp_path / "r", inputs, report)
    done = verify_without_django(folder)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("OK:")
