"""Model providers from other packages (the `kontest.models` entry-point group).

The test plugin (tests/plugins/kontest_test_plugin, installed by `make setup-test`) adds
`fixed:WORD` without a line of kontest_tui naming it; hand-made entry points
(model_plugin_cases.py) show a plugin that does not load, claims a taken prefix or raises:
each is one line naming it, never a traceback, and the built-in providers keep working.
"""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Iterator
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import pytest

from kontest_tui import plugins
from kontest_tui.errors import ModelError, ModelSpecError
from kontest_tui.models.base import ChatRequest, Message
from kontest_tui.models.registry import plugin_problems, reload_plugins
from kontest_tui.models.sim import SimulatedModel
from kontest_tui.models.specs import alist_models, open_model, parse_model_spec
from kontest_tui.run.api import describe_model_choice
from kontest_tui.store import Store
from tests.support.cli import kontest

ROOT = Path(__file__).parents[2]
KINAWLEY_KG = ROOT / "tests" / "data" / "kinawley_kg.json"  # 3 relations, 18 turns


@pytest.fixture
def fresh_plugins() -> Iterator[None]:
    """Plugins loaded again for the test, and again after it (as installed)."""
    reload_plugins()
    yield
    reload_plugins()


@pytest.fixture
def hand_made(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The `kontest.models` group as these entry points; returns the groups looked up."""
    entries = [
        EntryPoint("ghost", "kontest_no_such_plugin.models:PROVIDER", plugins.MODELS_GROUP),
        EntryPoint("words", "kontest_tui.models.provider:CHAT", plugins.MODELS_GROUP),
        EntryPoint("taken", "model_plugin_cases:TAKEN", plugins.MODELS_GROUP),
        EntryPoint("bad", "model_plugin_cases:NOT_A_PREFIX", plugins.MODELS_GROUP),
        EntryPoint("raising", "model_plugin_cases:RAISING", plugins.MODELS_GROUP),
    ]
    looked_up: list[str] = []

    def hand_made_entry_points(group: str) -> list[EntryPoint]:
        looked_up.append(group)
        return entries if group == plugins.MODELS_GROUP else []

    monkeypatch.setattr(importlib.metadata, "entry_points", hand_made_entry_points)
    reload_plugins()
    yield looked_up
    reload_plugins()


def test_the_test_plugin_is_installed() -> None:
    names = [entry.name for entry in entry_points(group=plugins.MODELS_GROUP)]
    assert "fixed" in names, "the test plugin is not installed: run make setup-test"


@pytest.mark.usefixtures("fresh_plugins")
def test_kontest_run_asks_a_plugins_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`--model fixed:yes` runs a whole session through the installed plugin: every one of
    the 18 turns answered "yes", so no contradiction and no gap (worked out: every
    relation asked both ways gets yes twice)."""
    db = tmp_path / "s.db"
    code, _out, err = kontest(
        capsys, "run", "--kg", KINAWLEY_KG, "--model", "fixed:yes", "--db", db
    )
    assert code == 0, err
    code, out, err = kontest(capsys, "report", "--db", db, "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["model"] == "fixed:yes"
    assert (report["executions"], report["valid"], report["failed"]) == (18, 18, 0)
    assert report["errors"]["total"] == 0
    assert report["gap"]["intersection"]["missing"] == 0
    with Store(db) as store:
        stored = store.responses.load(store.sessions.resolve(None))
    assert {response.raw for response in stored.values()} == {"yes"}
    # the package itself never names the plugin
    package = ROOT / "kontest_tui"
    assert not [path for path in package.rglob("*.py") if "kontest_test_plugin" in path.read_text()]


@pytest.mark.usefixtures("fresh_plugins")
async def test_a_plugins_provider_is_listed_described_and_parsed() -> None:
    parsed = parse_model_spec("fixed:no")
    assert (parsed.kind, parsed.name, parsed.spec, parsed.mode) == (
        "fixed",
        "no",
        "fixed:no",
        "chat",
    )
    assert describe_model_choice("fixed:no") == "the same answer to every question"
    assert await alist_models("fixed:") == ["yes", "no"]
    with pytest.raises(ModelSpecError, match="fixed needs a word: fixed:WORD"):
        parse_model_spec("fixed:")
    with pytest.raises(ModelSpecError) as caught:
        parse_model_spec("nope:x")
    assert "(use one of: sim, ollama, openai, openai-completions, replay, local, fixed)" in str(
        caught.value
    )


def test_plugins_that_do_not_fit_are_left_out_in_one_line_each(
    capsys: pytest.CaptureFixture[str], hand_made: list[str]
) -> None:
    problems = {line.split("'")[1]: line for line in plugin_problems()}
    assert sorted(problems) == ["bad", "ghost", "taken", "words"]  # "raising" is loaded
    ghost, words, taken, bad = (problems[name] for name in ("ghost", "words", "taken", "bad"))
    assert ghost.startswith("plugin 'ghost' (kontest_no_such_plugin.models:PROVIDER) did not load")
    assert "ModuleNotFoundError: No module named 'kontest_no_such_plugin'" in ghost
    assert words.endswith("is left out: str is not a kontest_tui.models.provider.ModelProvider")
    assert taken.endswith("is left out: model kind 'sim' is taken")
    assert "model kind 'Bad Prefix' is not a prefix" in bad
    assert all("\n" not in line for line in problems.values())
    # the built-in provider of the taken prefix is the one used
    assert isinstance(open_model("sim"), SimulatedModel)
    # a spec of the plugin that did not load: one line saying why, exit 2, no traceback
    code, _out, err = kontest(capsys, "run", "--kg", KINAWLEY_KG, "--model", "ghost:x")
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "unknown model kind 'ghost'" in err and "did not load: ModuleNotFoundError" in err


async def test_a_plugin_that_raises_is_one_line_naming_it(hand_made: list[str]) -> None:
    with pytest.raises(ModelSpecError) as caught:
        parse_model_spec("raising:boom")
    assert str(caught.value) == (
        "model plugin 'raising' (model_plugin_cases:RAISING): ValueError: cannot read 'boom'"
    )
    model = open_model("raising:ok")
    with pytest.raises(ModelError) as failed:
        await model.check()
    assert str(failed.value) == (
        "model plugin 'raising' (model_plugin_cases:RAISING): "
        "RuntimeError: the plugin's check broke"
    )
    answered = await model.chat(ChatRequest((Message("user", "Is it?"),)))
    assert answered.text == "Yes"  # its answers pass through untouched


def test_built_in_specs_never_load_the_plugins(hand_made: list[str]) -> None:
    """A command naming a built-in model imports no plugin: the group is looked up the
    first time a prefix is not built in, once."""
    for spec in ("sim:careful", "ollama:m@h:1", "openai:m", "replay:a.jsonl", "local:x.gguf"):
        assert parse_model_spec(spec).spec
    open_model("sim")
    assert hand_made == []
    with pytest.raises(ModelSpecError):
        parse_model_spec("nope:x")
    with pytest.raises(ModelSpecError):
        parse_model_spec("nope:y")
    assert hand_made == [plugins.MODELS_GROUP]
