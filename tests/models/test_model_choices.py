"""What the wizard offers of models (run.choices): the Ollama models of a server keep its URL
(issue 24, defect 4: a model found by "Find Ollama models" lost its @URL and was then asked
on the default local server), and the simulated presets."""

from __future__ import annotations

from kontest_tui.models.specs import parse_model_spec
from kontest_tui.run.api import list_ollama_models, model_presets


def test_ollama_models_found_keep_the_servers_url(sim_url: str) -> None:
    found = list_ollama_models(f"ollama:anything@{sim_url}")
    assert "ollama:flaky:latest" not in found  # the URL is never dropped
    assert f"ollama:flaky:latest@{sim_url}" in found
    for spec in found:
        parsed = parse_model_spec(spec)
        assert (parsed.kind, parsed.url) == ("ollama", sim_url)
    # the field holding only a URL (no model yet) works too
    assert list_ollama_models(f"ollama:@{sim_url}") == found


def test_presets_are_the_simulated_profiles() -> None:
    presets = model_presets()
    assert "sim" in presets
    assert all(spec == "sim" or spec.startswith("sim:") for spec in presets)
    assert "sim:careful" in presets
