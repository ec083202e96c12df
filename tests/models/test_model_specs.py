"""Model specs: parsing, canonical text without secrets, opening the right client."""

from __future__ import annotations

from pathlib import Path

import pytest

from kontest_tui.errors import ModelSpecError
from kontest_tui.models.ollama import OllamaModel
from kontest_tui.models.openai import OpenAIModel
from kontest_tui.models.sim import SimulatedModel
from kontest_tui.models.specs import (
    ModelSpec,
    alist_models,
    open_model,
    parse_model_spec,
)


@pytest.mark.parametrize(
    ("text", "expected", "canonical"),
    [
        ("sim", ModelSpec("sim", "default"), "sim"),
        ("sim:careful", ModelSpec("sim", "careful"), "sim:careful"),
        ("ollama:llama3", ModelSpec("ollama", "llama3", "http://127.0.0.1:11434"), "ollama:llama3"),
        (
            "ollama:llama3:8b@http://10.0.0.5:11434/",
            ModelSpec("ollama", "llama3:8b", "http://10.0.0.5:11434"),
            "ollama:llama3:8b@http://10.0.0.5:11434",
        ),
        (
            "ollama:qwen@localhost:9999",
            ModelSpec("ollama", "qwen", "http://localhost:9999"),
            "ollama:qwen@http://localhost:9999",
        ),
        (
            "openai:gpt-4o-mini",
            ModelSpec("openai", "gpt-4o-mini", "https://api.openai.com/v1"),
            "openai:gpt-4o-mini",
        ),
        (
            "openai:m@http://127.0.0.1:8000",
            ModelSpec("openai", "m", "http://127.0.0.1:8000/v1"),
            "openai:m@http://127.0.0.1:8000/v1",
        ),
        (
            "openai-completions:base@http://127.0.0.1:8080/v1",
            ModelSpec("openai-completions", "base", "http://127.0.0.1:8080/v1"),
            "openai-completions:base@http://127.0.0.1:8080/v1",
        ),
        (
            "replay:runs/a.jsonl",
            ModelSpec("replay", "a.jsonl", path=Path("runs/a.jsonl")),
            "replay:runs/a.jsonl",
        ),
        ("local:gemma3-270m", ModelSpec("local", "gemma3-270m"), "local:gemma3-270m"),
    ],
)
def test_parse_model_spec(text: str, expected: ModelSpec, canonical: str) -> None:
    parsed = parse_model_spec(text)
    assert parsed == expected
    assert parsed.spec == canonical == str(parsed) == parsed.display
    assert parse_model_spec(canonical) == parsed  # the canonical text parses back


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty model spec"),
        ("gpt4", "unknown model kind 'gpt4'"),
        ("ollama:", "ollama needs a model name"),
        ("openai:@http://x", "openai needs a model name"),
        ("ollama:m@", "empty URL after '@'"),
        ("ollama:m@ftp://host", "bad URL"),
        ("openai:m@http://user:secret@host/v1", "credentials in the URL"),
        ("replay:", "replay needs a file"),
        ("local:", "local needs a model"),
    ],
)
def test_bad_specs_raise_one_line(text: str, message: str) -> None:
    with pytest.raises(ModelSpecError) as caught:
        parse_model_spec(text)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
    assert "secret" not in str(caught.value)


async def test_open_model_kinds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    sim = open_model("sim:careful", seed=3)
    assert isinstance(sim, SimulatedModel) and sim.seed == 3 and sim.spec == "sim:careful"
    ollama = open_model("ollama:llama3")
    assert isinstance(ollama, OllamaModel) and ollama.spec == "ollama:llama3"
    local_server = open_model("openai:m@http://127.0.0.1:8000")
    assert isinstance(local_server, OpenAIModel) and local_server.mode == "chat"
    completions = open_model("openai-completions:m@http://127.0.0.1:8000")
    assert isinstance(completions, OpenAIModel) and completions.mode == "completions"
    for model in (ollama, local_server, completions):
        await model.aclose()
    with pytest.raises(ModelSpecError, match="OPENAI_API_KEY is not set"):
        open_model("openai:gpt-4o-mini")
    with pytest.raises(ModelSpecError, match="unknown simulated-model profile"):
        open_model("sim:nope")
    with pytest.raises(ModelSpecError, match="replay file not found"):
        open_model("replay:/no/such/file.jsonl")


async def test_replay_spec_opens_replay_model(tmp_path: Path) -> None:
    recording = tmp_path / "answers.jsonl"
    recording.write_text('{"query": "Does A have a B?", "answer": "Yes."}\n')
    model = open_model(f"replay:{recording}")
    assert model.spec == f"replay:{recording}"
    from kontest_tui.models.base import ChatRequest, Message

    result = await model.chat(ChatRequest((Message("user", "Does A have a B?"),)))
    assert result.text == "Yes."


async def test_api_key_never_in_spec_repr_or_errors(
    monkeypatch: pytest.MonkeyPatch, refused_url: str
) -> None:
    key = "sk-test-SECRET-123456"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    model = open_model("openai:gpt-4o-mini")
    other = open_model(f"openai:gpt-4o-mini@{refused_url}")
    try:
        for item in (model, other):
            assert key not in item.spec
            assert key not in repr(item)
            assert key not in str(vars(item).get("spec", ""))
        assert key not in str(parse_model_spec("openai:gpt-4o-mini"))
        from kontest_tui.errors import ModelError
        from kontest_tui.models.base import ChatRequest, Message

        with pytest.raises(ModelError) as caught:
            await other.chat(ChatRequest((Message("user", "hi"),)))
        assert key not in str(caught.value)
    finally:
        await model.aclose()
        await other.aclose()


async def test_list_models_rejects_other_kinds() -> None:
    with pytest.raises(ModelSpecError, match="cannot list models"):
        await alist_models("replay:x.jsonl")
