"""What the wizard offers of models (run.choices): the Ollama models of a server keep its URL
(a model found by "Find Ollama models" that lost its @URL would be asked on the default
local server), and the simulated presets."""

from __future__ import annotations

from kontest_tui.models.specs import parse_model_spec
from kontest_tui.run.api import list_server_models, model_presets


def test_ollama_models_found_keep_the_servers_url(sim_url: str) -> None:
    found = list_server_models(f"ollama:anything@{sim_url}")
    assert "ollama:flaky:latest" not in found  # the URL is never dropped
    assert f"ollama:flaky:latest@{sim_url}" in found
    for spec in found:
        parsed = parse_model_spec(spec)
        assert (parsed.kind, parsed.url) == ("ollama", sim_url)
    # the field holding only a URL (no model yet) works too
    assert list_server_models(f"ollama:@{sim_url}") == found


def test_an_openai_compatible_servers_models_keep_its_url(sim_url: str) -> None:
    """Find models lists the server typed whatever its provider: `openai:@URL` too."""
    found = list_server_models(f"openai:@{sim_url}")
    assert f"openai:careful@{sim_url}/v1" in found
    assert all(parse_model_spec(spec).url == f"{sim_url}/v1" for spec in found)


def test_presets_are_the_simulated_profiles_then_the_local_model() -> None:
    presets = model_presets()
    assert "sim" in presets and "sim:careful" in presets
    simulated = [spec for spec in presets if spec == "sim" or spec.startswith("sim:")]
    others = presets[len(simulated) :]
    assert presets[: len(simulated)] == simulated  # the simulated ones first
    assert others in ([], ["local:gemma3-270m"])  # the [local] extra's model, when installed


def test_discovered_ollama_models_and_the_words_for_each_kind(sim_url: str) -> None:
    from kontest_tui.run.api import describe_model_choice, discover_server_models

    assert f"ollama:flaky:latest@{sim_url}" in discover_server_models(f"ollama:@{sim_url}")
    assert discover_server_models("ollama:@http://127.0.0.1:9") == []  # none answers: quiet
    # another provider's server is never asked quietly: the local default Ollama is
    assert discover_server_models(f"openai:m@{sim_url}") == discover_server_models()
    assert describe_model_choice("local:gemma3-270m") == "a real small model, offline"
    assert describe_model_choice("sim:careful") == "simulated"
    assert describe_model_choice("nonsense") == ""


def test_the_loaded_kgs_entities_come_first_unless_another_is_much_closer() -> None:
    """Scores worked out: the loaded KG's match gains 10 points (run.choices.LOADED_BONUS)."""
    from kontest_tui.kg.search import EntityMatch
    from kontest_tui.run.api import loaded_first

    found = [
        EntityMatch("IE", "Ireland", source="sample:subdivisions", score=100.0),
        EntityMatch("ireland", "Ireland", source="sample:places", score=100.0),
        EntityMatch("NIR", "Northern Ireland", source="sample:subdivisions", score=90.0),
        EntityMatch("iceland", "Iceland", source="sample:places", score=85.7),
        EntityMatch("king", "King", source="sample:music", score=77.1),
    ]
    ranked = [match.id for match in loaded_first(found, "places")]
    assert ranked == ["ireland", "IE", "iceland", "NIR", "king"]  # 110, 100, 95.7, 90, 77.1
    assert [m.id for m in loaded_first(found, "music")][:2] == ["IE", "ireland"]  # 87.1 < 90
    assert loaded_first(found, None) == found


def test_the_small_local_model_is_offered_only_when_its_extra_is_installed(
    monkeypatch,  # noqa: ANN001
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "xllamacpp" else real(name)
    )
    assert not any(spec.startswith("local:") for spec in model_presets())
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object())
    assert [spec for spec in model_presets() if spec.startswith("local:")] == ["local:gemma3-270m"]
