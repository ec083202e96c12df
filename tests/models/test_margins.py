"""Answer margins: P(yes | yes or no) from the first tokens' log-probabilities, read from
every wire shape, sent by the simulated server in both wire formats (OpenAI chat, OpenAI
completions, Ollama) and read back by the real clients over HTTP; a server refusing
logprobs is asked without them; completions mode's prompt per answer format."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from kontest_tui.domain.answers import parse_answer
from kontest_tui.domain.margins import first_margin, is_low_margin, p_yes_of
from kontest_tui.domain.records import Answer, Response, Verdict
from kontest_tui.models.base import ChatOptions, ChatRequest, Message
from kontest_tui.models.completion_prompt import (
    load_completion_prompt,
    parse_completion_prompt,
    render_completion_prompt,
)
from kontest_tui.models.logprobs import positions_in
from kontest_tui.models.ollama import OllamaModel
from kontest_tui.models.openai import OpenAIModel
from kontest_tui.models.sim import SimulatedModel
from kontest_tui.oracles.margins import (
    NO_ANSWERS,
    NO_MARGINS,
    MarginTally,
    is_weak,
    summarize_margins,
)
from tests.models.model_test_servers import ProxyHandler

LOG = math.log


def test_p_yes_sums_yes_like_and_no_like_tokens() -> None:
    # " Yes" 0.6 + " yes" 0.05 against " No" 0.3 + "NO" 0.05: 0.65 / 1.0; "\n" is neither
    alternatives = [(" Yes", LOG(0.6)), (" No", LOG(0.3)), (" yes", LOG(0.05)), ("NO", LOG(0.05))]
    assert p_yes_of([*alternatives, ("\n", LOG(0.01))]) == 0.65
    assert p_yes_of([("▁true", LOG(0.2)), ("false", LOG(0.6))]) == 0.25  # JSON Booleans
    assert p_yes_of([("Paris", LOG(0.9))]) is None
    # markup first: the first position holding a yes/no token decides
    assert first_margin([[("**", LOG(0.9))], [("Yes", LOG(0.3)), ("No", LOG(0.1))]]) == 0.75
    assert first_margin([[("**", LOG(0.9))]]) is None
    assert is_low_margin(0.61) and is_low_margin(0.39) and not is_low_margin(0.75)
    assert not is_low_margin(None)


def test_the_three_wire_shapes() -> None:
    chat = {
        "content": [
            {"token": " Yes", "logprob": LOG(0.5), "top_logprobs": [
                {"token": " Yes", "logprob": LOG(0.5)}, {"token": " No", "logprob": LOG(0.4)}
            ]},
        ]
    }  # fmt: skip
    legacy = {
        "tokens": [" No"],
        "token_logprobs": [LOG(0.6)],
        "top_logprobs": [{" No": LOG(0.6), " Yes": LOG(0.2)}],
    }
    ollama = chat["content"]
    assert first_margin(positions_in(chat)) == round(0.5 / 0.9, 4)
    assert first_margin(positions_in(legacy)) == 0.25
    assert first_margin(positions_in(ollama)) == round(0.5 / 0.9, 4)
    assert positions_in(None) == [] and positions_in({"other": 1}) == []


def test_weak_errors_are_those_between_low_margin_answers() -> None:
    low, sure = {("a", 0): 0.55, ("b", 0): 0.42}, {("a", 0): 0.55, ("b", 0): 0.95}
    error = Verdict("atomic", "r", "t1", True, (("a", 0), ("b", 0)), (Answer.YES, Answer.NO))
    assert is_weak(error, low) and not is_weak(error, sure) and not is_weak(error, {})
    assert summarize_margins([], {}, [error])["note"] == NO_ANSWERS  # nothing to measure
    tally = MarginTally()  # a yes/no answer without a margin, one weak error, one not
    said = {
        ("a", 0): Response("a", 0, "Yes", Answer.YES),
        ("b", 0): Response("b", 0, "No", Answer.NO),
    }
    tally.add_responses({"a": "kontest", "b": "kontest"}, said)
    tally.add_verdicts([error])
    section = tally.to_json()
    assert section["note"] == NO_MARGINS and section["weak"] == {"atomic": 0, "total": 0}
    tally = MarginTally()
    said = {key: Response(key[0], 0, "Yes", Answer.YES, p_yes=p) for key, p in low.items()}
    tally.add_responses({"a": "kontest", "b": "kontest"}, said)
    tally.add_verdicts([error, replace(error, refs=(("a", 0),)), replace(error, error=False)])
    section = tally.to_json()
    assert section["weak"] == {"atomic": 2, "total": 2} and "note" not in section
    assert section["per_kind"] == {
        "kontest": {"answers": 2, "with_margin": 2, "share": 1.0, "low": 2, "range": [0.42, 0.55]}
    }


CHATS = [(f"Does Realm{i} have a Hamlet{i}?",) for i in range(30)] + [
    ("Does Ireland have a Ulster?", "Is there a Ulster in Ireland?")
]


async def ask(model: object, chat: tuple[str, ...], options: ChatOptions) -> object:
    messages: list[Message] = []
    result = None
    for question in chat:
        messages.append(Message("user", question))
        result = await model.chat(ChatRequest(tuple(messages), options))  # type: ignore[attr-defined]
        messages.append(Message("assistant", result.text))
    return result


@pytest.mark.parametrize(
    ("kind", "stream"),
    [("openai", True), ("openai", False), ("completions", True), ("completions", False),
     ("ollama", True), ("ollama", False)],
)  # fmt: skip
async def test_the_sim_server_sends_margins_the_clients_read(
    sim_url: str, kind: str, stream: bool
) -> None:
    """Over real HTTP each client reads the margin the in-process model gives the same chat
    (within the rounding of the log-probabilities on the wire), on the side of its answer."""
    options = ChatOptions(system_prompt="Be concise.")
    expected = [await ask(SimulatedModel("default"), chat, options) for chat in CHATS]
    if kind == "ollama":
        client: object = OllamaModel("default", sim_url, stream=stream)
    else:
        mode = "completions" if kind == "completions" else "chat"
        client = OpenAIModel("default", f"{sim_url}/v1", mode=mode, stream=stream)
    try:
        got = [await ask(client, chat, options) for chat in CHATS]
    finally:
        await client.aclose()  # type: ignore[attr-defined]
    for mine, theirs in zip(expected, got, strict=True):
        assert theirs.p_yes is not None and mine.p_yes is not None  # type: ignore[attr-defined]
        assert abs(theirs.p_yes - mine.p_yes) < 1e-3  # type: ignore[attr-defined]
    for result in got:  # on the side of the answer given (the simulated model's are yes/no)
        said = parse_answer(result.text)  # type: ignore[attr-defined]
        if said in (Answer.YES, Answer.NO):
            assert (result.p_yes > 0.5) == (said is Answer.YES)  # type: ignore[attr-defined]


async def test_a_server_refusing_logprobs_is_asked_without_them(proxy_url: str) -> None:
    model = OpenAIModel("nologprobs", f"{proxy_url}/v1")
    ProxyHandler.payloads.clear()
    try:
        first = await model.chat(ChatRequest((Message("user", "Is Cork in Ireland?"),)))
        second = await model.chat(ChatRequest((Message("user", "Is Cork in Qatar?"),)))
    finally:
        await model.aclose()
    assert first.text == second.text == "Yes" and first.p_yes is None
    asked = ["logprobs" in payload for payload in ProxyHandler.payloads]
    assert asked == [True, False, False]  # refused once, then never asked again


def test_completions_mode_has_a_prompt_per_answer_format() -> None:
    """A name needs more than 3 tokens: open questions get their own few-shot prompt and
    budget, multiple choice its own; every prompt reads back to the chat it rendered."""
    yes_no, choice, open_ = (load_completion_prompt(f) for f in ("yes_no", "choice", "open"))
    assert yes_no.max_tokens == 3 and choice.max_tokens >= 3 and open_.max_tokens >= 12
    assert "Yes or No" in yes_no.header and "letter" in choice.header and "name" in open_.header
    model = OpenAIModel("m", "http://127.0.0.1:9/v1", mode="completions")
    chat = (Message("user", "In which country is Ulster located?"),)
    _, payload = model.build_payload(ChatRequest(chat, answer_format="open"))
    assert payload["max_tokens"] == open_.max_tokens and payload["logprobs"] == 5
    prompt = str(payload["prompt"])
    assert prompt.startswith(open_.preamble) and prompt.endswith("located?\nAnswer:")
    for form in (yes_no, choice, open_):
        assert parse_completion_prompt(render_completion_prompt(chat, form)) == list(chat)
