"""verify_report hashes only the report folder's own files (issue 20 item 13): a forged
manifest naming an absolute path or one that climbs out of the folder is refused, not read."""

from __future__ import annotations

import hashlib

from scoring.report.verify import hash_mismatches


def test_paths_outside_the_folder_are_refused_and_not_read(tmp_path):
    folder = tmp_path / "report"
    folder.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read me")
    digest = hashlib.sha256(secret.read_bytes()).hexdigest()
    (folder / "inside.txt").write_text("fine")
    (folder / "link").symlink_to(secret)
    manifest = {
        "files": {
            str(secret): {"sha256": digest},
            "../secret.txt": {"sha256": digest},
            "link": {"sha256": digest},
            "inside.txt": {"sha256": hashlib.sha256(b"fine").hexdigest()},
        }
    }
    out = hash_mismatches(folder, manifest)
    assert sorted(out) == sorted(
        [
            f"refused: {secret} (outside the report folder)",
            "refused: ../secret.txt (outside the report folder)",
            "refused: link (outside the report folder)",
        ]
    )


def test_a_malformed_manifest_is_one_line():
    from pathlib import Path

    assert hash_mismatches(Path("."), {"files": ["x"]}) == [
        "malformed: manifest.json has no 'files' object"
    ]
