"""Stage II: generators behind one interface (no Django).

    generator = load_generator({"name": "sd15", "kind": "diffusers-t2i", "model": "/models/sd15"})
    results = generator.generate([GenerationRequest("P1:culture:Korean:s0", "A Korean ...", seed=0)])

Local kinds import torch/diffusers only when built.
"""

from generation.backends.base import (
    ERROR,
    KINDS,
    OK,
    REFUSED,
    GenerationRequest,
    GenerationResult,
    Generator,
    GeneratorConfig,
    content_sha256,
    load_generator,
)

__all__ = [
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
