"""Stage II: generators behind one interface (no Django).

    generator = load_generator({"name": "sd15", "kind": "diffusers-t2i", "model": "/models/sd15"})
    results = generator.generate([GenerationRequest("P1:culture:Korean:s0", "A Korean ...", seed=0)])

Local kinds import torch/diffusers only when built. The kinds and their builders are
``registry.GENERATORS`` (docs/generation.md).
"""

from generation.backends.base import (
    ERROR,
    OK,
    REFUSED,
    GenerationRequest,
    GenerationResult,
    Generator,
    GeneratorConfig,
    content_sha256,
)
from generation.backends.registry import (
    GENERATORS,
    KINDS,
    BackendConfigError,
    ConfigProblems,
    configs_by_name,
    generator_config,
    load_generator,
)

__all__ = [
    "GENERATORS",
    "BackendConfigError",
    "ConfigProblems",
    "configs_by_name",
    "generator_config",
    "ERROR",
    "KINDS",
    "OK",
    "REFUSED",
    "GenerationRequest",
    "GenerationResult",
    "Generator",
    "GeneratorConfig",
    "content_sha256",
    "load_generator",
]
