"""One registry shape for every kind of backend: generators, judges, REFLECT's VLMs.

The same config mistakes give the same wording whichever kind of backend makes them, and the
backend packages import one way (no module reaches itself through its imports)."""

import grimp
import pytest

from generation.backends import (
    GENERATORS,
    KINDS,
    BackendConfigError,
    GeneratorConfig,
    generator_config,
    load_generator,
)
from scoring.judges.registry import JUDGES, VLM_BACKENDS, load_judge, vlm_backend_config
from scoring.reflect.backends import inline_choice, model_choice


def test_the_kinds_are_the_registry_names():
    assert KINDS == GENERATORS.names
    assert set(KINDS) == {
        "diffusers-t2i",
        "diffusers-edit",
        "openai-images",
        "google-imagen",
        "gemini",
    }
    assert GENERATORS.local_names == ("diffusers-t2i", "diffusers-edit")
    assert set(JUDGES.names) == {"hard_refusal", "cue_vlm", "cue_clip", "ensemble"}
    assert set(VLM_BACKENDS.names) == {"openai", "transformers", "scripted"}
    assert VLM_BACKENDS.local_names == ("transformers",)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: load_generator({"name": "g", "kind": "dalle", "model": "m"}),
            "unknown generator kind 'dalle'; known: diffusers-edit, diffusers-t2i, gemini, "
            "google-imagen, openai-images",
        ),
        (
            lambda: load_judge({"kind": "oracle", "name": "j"}),
            "unknown judge kind 'oracle'; known: cue_clip, cue_vlm, ensemble, hard_refusal",
        ),
        (
            lambda: load_judge({"kind": "cue_vlm", "name": "j", "backend": {"type": "magic"}}),
            "unknown backend type 'magic'; known: openai, scripted, transformers",
        ),
        (
            lambda: model_choice("m", {"m": {"type": "magic", "model": "x"}}),
            "unknown backend type 'magic'; known: openai, scripted, transformers",
        ),
    ],
)
def test_an_unknown_kind_has_one_wording(build, message):
    with pytest.raises(BackendConfigError) as caught:
        build()
    assert str(caught.value) == message


def test_unknown_keys_and_missing_keys_have_one_wording():
    with pytest.raises(
        BackendConfigError, match=r"^unknown generator config keys \['colour'\] in 'g'; known: \["
    ):
        generator_config({"name": "g", "kind": "gemini", "model": "m", "colour": "red"})
    with pytest.raises(BackendConfigError, match=r"^generator 'g' needs a 'model'$"):
        generator_config({"name": "g", "kind": "gemini"})
    api = {"type": "openai", "model": "m"}
    for build in (
        lambda: load_judge({"kind": "cue_vlm", "name": "j", "backend": api}),
        lambda: model_choice("j", {"j": api}),
    ):
        with pytest.raises(BackendConfigError, match=r"^VLM backend 'j' needs a 'endpoint'$"):
            build()
    local = {"type": "transformers", "model": "/m", "colour": "red"}
    for build in (
        lambda: load_judge({"kind": "cue_vlm", "name": "j", "backend": local}),
        lambda: model_choice("j", {"j": local}),
    ):
        with pytest.raises(
            BackendConfigError, match=r"^unknown VLM backend config keys \['colour'\] in 'j'"
        ):
            build()


def test_a_judge_and_a_reflect_model_parse_the_backend_section_alike():
    section = {
        "type": "openai",
        "endpoint": "http://127.0.0.1:9/v1",
        "model": "m",
        "concurrency": 3,
    }
    choice = model_choice("m", {"m": {**section, "decoding": {"temperature": 0.0}}})
    assert choice.config == vlm_backend_config(section, name="m") == section
    assert choice.decoding == {"temperature": 0.0} and not choice.local
    secret = {**section, "api_key": "sk-live"}
    for build in (
        lambda: load_judge({"kind": "cue_vlm", "name": "m", "backend": secret}),
        lambda: model_choice("m", {"m": secret}),
        lambda: inline_choice(endpoint="http://127.0.0.1:9/v1", api_model="m", api_key="sk"),
    ):
        with pytest.raises(BackendConfigError, match="environment variable named by api_key_env"):
            build()


def test_a_parsed_generator_config_is_the_dataclass():
    config = generator_config({"name": "g", "kind": "openai-images", "model": "gpt-image-1"})
    assert isinstance(config, GeneratorConfig) and config.kind == "openai-images"
    assert generator_config(config) is config


@pytest.mark.parametrize("package", ["generation", "scoring"])
def test_backend_packages_import_in_one_direction(package):
    """No module of generation/backends or scoring/judges imports one that imports it back
    (the old ``base.load_generator`` if-chain made an eight-file circle)."""
    graph = grimp.build_graph(package, cache_dir=None)
    prefix = {"generation": "generation.backends", "scoring": "scoring.judges"}[package]
    modules = {m for m in graph.modules if m == prefix or m.startswith(prefix + ".")}
    circles = []
    for importer in sorted(modules):
        for imported in graph.find_modules_directly_imported_by(importer) & modules:
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back and imported != prefix and importer != prefix:
                circles.append((importer, *back))
    assert circles == []


def test_a_name_the_backends_file_does_not_configure_has_one_wording(settings):
    from generation.services import generator_config_resolve
    from scoring.selectors import JudgeNotConfigured, judge_config

    settings.ACRB_GENERATORS = {"sd35": {"kind": "diffusers-t2i", "model": "/m"}}
    settings.ACRB_JUDGES = {}
    with pytest.raises(BackendConfigError) as generator:
        generator_config_resolve(name="sd3")
    assert str(generator.value) == "no generator named 'sd3'; configured: sd35"
    with pytest.raises(JudgeNotConfigured) as judge:
        judge_config(study=None, judge_name="rules")
    assert str(judge.value) == "no judge named 'rules'; configured: none (set ACRB_BACKENDS_FILE)"
