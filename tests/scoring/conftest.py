"""Scoring app fixtures: studies with real image files on disk, and judge configs put into
settings.ACRB_JUDGES. Django, PIL and the services are imported inside the fixtures, so the
Django-free tests below (stats/) collect without them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

RULES_JUDGE = {"kind": "hard_refusal", "name": "rules", "version": "1", "clip": None}


def add_item(
    study,
    item_id: str,
    *,
    pixels=None,
    generator: str = "gen-a",
    value: str = "Korean",
    raw_bytes: bytes | None = None,
    **fields,
):
    """An item whose image is written under MEDIA_ROOT: a colour, an array, or raw bytes."""
    from django.conf import settings as django_settings
    from PIL import Image

    from annotations.models import Item
    from annotations.services import attribute_value_get_or_create

    attribute_value = attribute_value_get_or_create(
        study=study, attribute="culture", value=value, cue_description=f"{value} clothing"
    )
    image_name = ""
    if pixels is not None or raw_bytes is not None:
        image_name = f"studies/{study.slug}/{item_id}.png"
        path = Path(django_settings.MEDIA_ROOT) / image_name
        path.parent.mkdir(parents=True, exist_ok=True)
        if raw_bytes is not None:
            path.write_bytes(raw_bytes)
        elif isinstance(pixels, tuple):
            Image.new("RGB", (32, 32), pixels).save(path)
        else:
            Image.fromarray(np.asarray(pixels, dtype=np.uint8)).save(path)
    return Item.objects.create(
        study=study,
        item_id=item_id,
        image=image_name,
        generator=generator,
        prompt=f"a {value} person cooking",
        attribute_value=attribute_value,
        cue=f"{value} clothing",
        **fields,
    )


def noise(seed: int, size: int = 32) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, size=(size, size, 3))


@pytest.fixture(autouse=True)
def _fresh_judges(request):
    """Judges are cached per process; each test starts with none loaded."""
    if not request.config.pluginmanager.hasplugin("django"):
        yield  # a Django-free test (stats/) loads no judge
        return
    from scoring import services as scoring_services

    scoring_services.judge_cache_clear()
    yield
    scoring_services.judge_cache_clear()


@pytest.fixture
def judges(settings):
    """Set the configured judges: ``judges(name=config, ...)``."""

    def configure(**configs):
        settings.ACRB_JUDGES = configs
        return configs

    return configure


@pytest.fixture
def mixed_study(study):
    """Six items: four ordinary (noise), one blank, one provider refusal with no image."""
    for index in range(4):
        add_item(
            study, f"photo-{index}", pixels=noise(index), generator=["gen-a", "gen-b"][index % 2]
        )
    add_item(study, "blank", pixels=(0, 0, 0), generator="gen-b")
    add_item(
        study,
        "refused",
        generator="gen-a",
        provider_refusal_code="content_policy_violation",
        provider_refusal_message="Your request was rejected by our safety system.",
    )
    return study
