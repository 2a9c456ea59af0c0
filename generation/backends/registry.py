"""Backends chosen by name: one registry shape for generators, judges and REFLECT's VLMs.

A :class:`Registry` maps a name (a generator ``kind``, a judge ``kind``, a VLM backend
``type``) to a builder and says whether that kind loads a model in the worker. Every kind of
backend is configured the same way — a plain mapping whose ``kind`` (or ``type``) picks the
builder, parsed once by :func:`config_values` — and fails with the same wording::

    unknown generator kind 'dalle'; known: diffusers-edit, diffusers-t2i, ...
    unknown generator config keys ['colour'] in 'sd15'; known: [...]
    generator 'sd15' needs a 'model'
    no generator named 'sd1'; configured: sd15, sdxl

The generators' table (``GENERATORS``) is here, above the backends it builds, so no backend
module imports the module that builds it (the old ``base.load_generator`` if-chain made an
eight-file circle). The judges' and VLM backends' tables are in ``scoring/judges/registry.py``.
No Django.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Generic, TypeVar

from generation.backends.base import BackendConfigError, Generator, GeneratorConfig

Builder = TypeVar("Builder", bound=Callable[..., Any])


def unknown_name(what: str, name: Any, known: Iterable[str]) -> str:
    """The one wording for a kind a registry does not hold."""
    return f"unknown {what} {name!r}; known: {', '.join(sorted(known))}"


def not_configured(what: str, name: Any, configured: Iterable[str]) -> str:
    """The one wording for a name the backends file (``ACRB_BACKENDS_FILE``) does not
    configure: a generator, a judge, a rewriter."""
    listed = ", ".join(sorted(configured)) or "none (set ACRB_BACKENDS_FILE)"
    return f"no {what} named {name!r}; configured: {listed}"


@dataclass(frozen=True)
class Entry(Generic[Builder]):
    build: Builder
    # Loads a model in the worker process (the GPU queue), not an HTTP API. A judge's kind
    # leaves it False: its config decides (scoring.judges.registry.runs_a_local_model).
    local: bool = False


class Registry(Generic[Builder]):
    """Builders by name. ``what`` names the key in error messages ("generator kind")."""

    def __init__(self, what: str, entries: Mapping[str, Entry[Builder]]):
        self.what = what
        self._entries = dict(entries)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._entries)

    @property
    def local_names(self) -> tuple[str, ...]:
        return tuple(name for name, entry in self._entries.items() if entry.local)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def entry(self, name: Any) -> Entry[Builder]:
        if name not in self._entries:
            raise BackendConfigError(unknown_name(self.what, name, self._entries))
        return self._entries[name]

    def builder(self, name: Any) -> Builder:
        return self.entry(name).build

    def is_local(self, name: Any) -> bool:
        return self.entry(name).local


def config_values(
    raw: Any,
    *,
    what: str,
    name: str | None = None,
    known: Collection[str],
    required: Iterable[str] = (),
) -> dict[str, Any]:
    """A copy of ``raw`` checked for shape: a mapping, no unknown keys, the required ones set.
    ``what`` and ``name`` say where, in every message ("generator 'sd15'")."""
    where = f"{what} {name!r}" if name else f"{what} config"
    if not isinstance(raw, Mapping):
        raise BackendConfigError(f"{where}: config must be a mapping, not {type(raw).__name__}")
    values = dict(raw)
    unknown = sorted(set(values) - set(known))
    if unknown:
        place = f" in {name!r}" if name else ""
        raise BackendConfigError(
            f"unknown {what} config keys {unknown}{place}; known: {sorted(known)}"
        )
    for key in required:
        if values.get(key) in (None, ""):
            raise BackendConfigError(f"{where} needs a {key!r}")
    return values


class ConfigProblems(ValueError):
    """Every problem of one config, so a user fixes them in one go rather than one run per
    mistake: ``problems`` holds ``(key, message)`` pairs (key "" for the config as a whole),
    ``lines`` one line each (``key: message``), and ``str`` joins the lines."""

    def __init__(self, problems: Iterable[str | tuple[str, str]]):
        self.problems = [item if isinstance(item, tuple) else ("", item) for item in problems]
        super().__init__("\n".join(self.lines))

    @property
    def lines(self) -> list[str]:
        return [f"{key}: {message}" if key else message for key, message in self.problems]

    def within(self, key: str) -> ConfigProblems:
        """The same problems as those of ``key`` in an enclosing config (``study.slug``)."""
        return ConfigProblems(
            (f"{key}.{inner}" if inner else key, message) for inner, message in self.problems
        )


def configs_by_name(raw: Any, *, what: str) -> dict[str, dict[str, Any] | None]:
    """``named_configs``, refused whole (``ConfigProblems``) when an entry is wrong."""
    configs, problems = named_configs(raw, what=what)
    if problems:
        raise ConfigProblems(problems)
    return configs


def named_configs(raw: Any, *, what: str) -> tuple[dict[str, dict[str, Any] | None], list]:
    """The one parser of a "list or mapping of names" key (a study's ``generators``,
    ``run_audit``'s ``judges``): name -> its config, or None for the one configured under that
    name in the backends file.

    ``raw`` is a mapping name -> config (or null), or a list whose entries are names or configs
    that carry their ``name``; null is none. Returns the good entries and one problem per bad
    one (a line, or ``(name, line)``), so a caller can check the good ones too.
    """
    if raw is None:
        return {}, []
    problems: list[str | tuple[str, str]] = []
    configs: dict[str, dict[str, Any] | None] = {}
    if isinstance(raw, Mapping):
        for name, config in raw.items():
            if not isinstance(name, str) or not name:
                problems.append(f"{name!r}: a {what} name must be text")
            elif config is not None and not isinstance(config, Mapping):
                shown = type(config).__name__
                problems.append((name, f"a {what} config is a mapping or null, not {shown}"))
            else:
                configs[name] = None if config is None else dict(config)
    elif isinstance(raw, list):
        for number, entry in enumerate(raw, start=1):
            if isinstance(entry, str) and entry:
                name, config = entry, None
            elif isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
                name = entry["name"]
                config = {key: value for key, value in entry.items() if key != "name"}
            else:
                problems.append(
                    f"entry {number}: a {what} name or a config with a 'name', not {entry!r}"
                )
                continue
            if name in configs:
                problems.append(f"{name!r} is listed twice")
            configs[name] = config
    else:
        problems.append(
            f"a list of {what} names or a mapping name -> config, not {type(raw).__name__}"
        )
    return configs, problems


def dataclass_keys(cls: type) -> tuple[str, ...]:
    return tuple(field.name for field in fields(cls))


# --- generators -------------------------------------------------------------------------------
# The local kinds import torch and diffusers only when built: a web process or an API worker
# that never makes an image on this machine must not pay for (or need) them.


def _diffusers_t2i(config: GeneratorConfig) -> Generator:
    from generation.backends.diffusers_t2i import DiffusersText2Image

    return DiffusersText2Image(config)


def _diffusers_edit(config: GeneratorConfig) -> Generator:
    from generation.backends.diffusers_edit import DiffusersImageEdit

    return DiffusersImageEdit(config)


def _openai_images(config: GeneratorConfig) -> Generator:
    from generation.backends.openai_images import OpenAIImages

    return OpenAIImages(config)


def _google_images(config: GeneratorConfig) -> Generator:
    from generation.backends.google_images import GoogleImages

    return GoogleImages(config)


GENERATORS: Registry[Callable[[GeneratorConfig], Generator]] = Registry(
    "generator kind",
    {
        "diffusers-t2i": Entry(_diffusers_t2i, local=True),
        "diffusers-edit": Entry(_diffusers_edit, local=True),
        "openai-images": Entry(_openai_images, local=False),
        "google-imagen": Entry(_google_images, local=False),
        "gemini": Entry(_google_images, local=False),
    },
)
KINDS = GENERATORS.names


def generator_config(raw: GeneratorConfig | Mapping[str, Any]) -> GeneratorConfig:
    """The one parser of a generator config (``ACRB_GENERATORS`` entries, a study's stored
    config): known keys only, ``name``, ``kind`` and ``model`` set, ``kind`` registered."""
    if isinstance(raw, GeneratorConfig):
        GENERATORS.entry(raw.kind)
        return raw
    name = raw.get("name") if isinstance(raw, Mapping) else None
    values = config_values(
        raw,
        what="generator",
        name=name,
        known=dataclass_keys(GeneratorConfig),
        required=("name", "kind", "model"),
    )
    GENERATORS.entry(values["kind"])
    return GeneratorConfig(**values)


def load_generator(config: GeneratorConfig | Mapping[str, Any]) -> Generator:
    """Build the generator named by ``config.kind`` (loads weights for local kinds)."""
    config = generator_config(config)
    return GENERATORS.builder(config.kind)(config)
