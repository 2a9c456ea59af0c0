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


def reflect_demo_sources() -> tuple[dict[str, Any], Any]:
    """The demo face set's source photos (``reflect_demo/``, README there): the listing
    ``faces.json`` and a reader of one listed file's bytes."""
    folder = resources.files(__name__).joinpath("reflect_demo")
    listing = json.loads(folder.joinpath("faces.json").read_text("utf-8"))
    return listing, lambda name: folder.joinpath(name).read_bytes()
