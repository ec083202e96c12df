"""The table of model providers (models/registry.py): what each declares and what reads it.

Spec parsing imports no client; the pickers' hints, the batch engines, the completions-mode
hints and the offline check all come from the providers' declarations.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from kontest_tui.errors import InvalidInputError, ModelSpecError
from kontest_tui.models.provider import CHAT, COMPLETIONS, RECORDING
from kontest_tui.models.registry import BUILT_IN
from kontest_tui.models.specs import (
    check_model_spec,
    completions_kinds,
    completions_spec,
    parse_model_spec,
)
from kontest_tui.run.api import finder_title, model_spec_patterns, server_title
from kontest_tui.run.batch import check_batch_model


def test_one_provider_per_prefix_each_asked_its_way() -> None:
    prefixes = [provider.prefix for provider in BUILT_IN]
    assert prefixes == ["sim", "ollama", "openai", "openai-completions", "replay", "local"]
    for provider in BUILT_IN:
        assert provider.hints.pattern.startswith(f"{provider.prefix}:")
    modes = {spec: parse_model_spec(spec).mode for spec in ("sim", "openai:m", "local:x.gguf")}
    assert modes == {"sim": CHAT, "openai:m": CHAT, "local:x.gguf": COMPLETIONS}
    assert parse_model_spec("openai-completions:m").mode == COMPLETIONS
    assert parse_model_spec("replay:a.jsonl").mode == RECORDING
    # the provider names the default profile without importing the simulated model
    from kontest_tui.models.providers import sim
    from kontest_tui.models.sim import DEFAULT_PROFILE

    assert sim.DEFAULT_PROFILE == DEFAULT_PROFILE


def test_a_spec_parses_without_importing_a_client() -> None:
    """Parsing and printing every kind of spec (startup of any command that reads one)
    imports neither httpx nor a client nor the simulated model, and loads no plugin."""
    code = (
        "import sys\n"
        "from kontest_tui.models.specs import parse_model_spec\n"
        "for text in ('sim:careful', 'ollama:m@h:1*2,h:2', 'openai:m@http://h:8000',\n"
        "             'openai-completions:m', 'replay:a.jsonl', 'local:gemma3-270m'):\n"
        "    parse_model_spec(text).spec\n"
        "heavy = ('httpx', 'kontest_tui.models.ollama', 'kontest_tui.models.openai',\n"
        "         'kontest_tui.models.sim', 'kontest_tui.models.local', 'xllamacpp',\n"
        "         'kontest_test_plugin')\n"
        "print(sorted(name for name in heavy if name in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ollama:m@h:99999", "port 99999 is out of range (1-65535)"),
        ("ollama:m@h:abc", "bad URL in model spec"),
        ("ollama:m@256.1.1.1:80", "bad URL in model spec"),
        ("ollama:m@http://[::1", "bad URL in model spec"),
        ("openai:m@ftp://h", "use http://HOST:PORT"),
        ("openai:m@http://h/v1?api_key=abcdef123456", "use OPENAI_API_KEY"),
        # Ollama takes no key: the line names none
        ("ollama:m@http://user:pw@h", "credentials in the URL of model spec are not supported"),
    ],
)
def test_server_urls_are_checked_in_one_line(text: str, message: str) -> None:
    with pytest.raises(ModelSpecError) as caught:
        parse_model_spec(text)
    assert message in str(caught.value)
    assert "OPENAI" not in str(caught.value) or text.startswith("openai")


def test_ipv6_and_default_urls() -> None:
    assert parse_model_spec("ollama:m@[::1]:8000").url == "http://[::1]:8000"
    assert parse_model_spec("openai:m@[::1]:8000").url == "http://[::1]:8000/v1"
    assert parse_model_spec("ollama:m@http://127.0.0.1:11434").spec == "ollama:m"


def test_the_pickers_hints_come_from_the_providers() -> None:
    assert model_spec_patterns() == [
        "sim:PROFILE",
        "ollama:MODEL[@URL]",
        "openai:MODEL[@BASE_URL]",
        "replay:FILE.jsonl",
    ]
    assert finder_title() == "Ollama"  # the server "Find models" asks when none is typed
    assert server_title("openai:@http://h:8000") == "OpenAI-compatible"
    assert server_title("replay:a.jsonl") == "Ollama"  # cannot list: the default one
    assert server_title("", "openai:m@http://h:8000") == "Ollama"  # never asked unasked


def test_completions_mode_and_batch_engines_are_the_providers_declarations() -> None:
    assert completions_spec("openai:m@http://h:8000/v1") == "openai-completions:m@http://h:8000/v1"
    assert completions_spec("ollama:m") == "openai-completions:MODEL@URL"
    assert completions_kinds() == "openai-completions:MODEL@URL (or local:)"
    with pytest.raises(InvalidInputError) as caught:
        check_batch_model("replay:a.jsonl")
    assert str(caught.value).startswith(
        "batch mode writes OpenAI Batch API files (sim:, openai:, openai-completions:); "
        "replay: models have no batch engine"
    )
    for spec in ("sim", "openai:m@http://h:8000", "openai-completions:m@http://h:8000"):
        check_batch_model(spec)


def test_the_offline_check_is_the_providers() -> None:
    assert check_model_spec("sim:careful").name == "careful"
    with pytest.raises(ModelSpecError, match="unknown simulated-model profile"):
        check_model_spec("sim:nope")
    # a recording is read when the model opens ("replay file not found"), not here
    assert check_model_spec("replay:/no/such.jsonl").kind == "replay"
