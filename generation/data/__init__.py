"""Reference data shipped inside the package (sources and licences: README.md in this folder).

Read through importlib.resources, so the files are found wherever the package is installed
(pyproject.toml lists them as package data), never through a path computed from ``__file__``.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def reflect_protocol() -> dict[str, Any]:
    """REFLECT's protocol (``reflect/protocol.json``): groups, the face-only editing instruction,
    the task prompts and the paper's published figures. One copy serves REFLECT and the FOCUS
    face edits."""
    text = resources.files(__name__).joinpath("reflect", "protocol.json").read_text("utf-8")
    return json.loads(text)
