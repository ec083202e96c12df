"""The real small local model (`local:gemma3-270m`, the [local] extra), asked in completions mode."""

from __future__ import annotations

import asyncio

import pytest

from kontest_tui.domain.answers import parse_answer
from kontest_tui.domain.records import Answer
from kontest_tui.errors import ModelSpecError
from kontest_tui.models.base import ChatOptions, ChatRequest, Message
from kontest_tui.models.http_common import DEFAULT_CHAT_MAX_TOKENS
from kontest_tui.models.local import local_extra_available, model_file, start_server
from kontest_tui.models.openai import OpenAIModel
from kontest_tui.models.specs import open_model

needs_extra = pytest.mark.skipif(
    not local_extra_available(),
    reason="the [local] extra (xllamacpp, gemma weights) is not installed",
)


def test_unknown_local_model_is_a_spec_error() -> None:
    with pytest.raises(ModelSpecError, match="unknown local model 'llama-9000'"):
        model_file("llama-9000")


@pytest.mark.local_model
@needs_extra
async def test_local_gemma_answers_yes_or_no() -> None:
    model = open_model("local:gemma3-270m")
    try:
        assert "completions mode" in await model.check()
        questions = [
            "Is there a Doha in Qatar?",
            "Does Qatar have a Doha?",
            "Does Ireland have a Ulster?",
            "Is there a Ulster in Ireland?",
        ]
        answers = []
        for question in questions:
            pieces: list[str] = []
            result = await model.chat(ChatRequest((Message("user", question),)), pieces.append)
            assert "".join(pieces) == result.text
            assert "\n" not in result.text  # stop sequence: one line
            answers.append(parse_answer(result.text))
        assert sum(answer.value in ("yes", "no") for answer in answers) >= 3
        # temperature 0: the same question gets the same answer
        again = await model.chat(ChatRequest((Message("user", questions[0]),)))
        assert parse_answer(again.text) == answers[0]
        # a sequential conversation: the earlier turn is part of the prompt
        second = await model.chat(
            ChatRequest(
                (
                    Message("user", questions[0]),
                    Message("assistant", again.text),
                    Message("user", questions[1]),
                )
            )
        )
        assert second.text.strip() != ""
    finally:
        await model.aclose()


def test_missing_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # import now raises ImportError
    with pytest.raises(ModelSpecError, match=r"install with pip install 'kontest-tui\[local\]'"):
        open_model("local:gemma3-270m")


QUESTIONS = (
    "Is there a Doha in Qatar?",
    "Does Qatar have a Doha?",
    "Does Ireland have a Ulster?",
    "Is there a Ulster in Ireland?",
)


async def llama_cpp_url() -> str:
    """xllamacpp's llama.cpp server with the bundled Gemma (the one `local:` uses)."""
    gguf = await asyncio.to_thread(model_file, "gemma3-270m")
    return await asyncio.to_thread(start_server, gguf)


@pytest.mark.local_model
@needs_extra
async def test_llama_cpp_chat_without_max_tokens_finishes() -> None:
    """`openai:` chat with no --max-tokens: the default limit ends the answer (it ran until
    the timeout before, n_predict -1). One question: at most DEFAULT_CHAT_MAX_TOKENS tokens."""
    model = OpenAIModel("gemma", f"{await llama_cpp_url()}/v1", mode="chat")
    options = ChatOptions(timeout=120.0, system_prompt="Answer with yes or no.")
    try:
        for question in QUESTIONS[:1]:
            pieces: list[str] = []
            result = await model.chat(
                ChatRequest((Message("user", question),), options), pieces.append
            )
            assert result.stopped != "timeout"
            assert len(pieces) <= DEFAULT_CHAT_MAX_TOKENS  # one streamed piece per token
    finally:
        await model.aclose()


@pytest.mark.local_model
@needs_extra
async def test_llama_cpp_completions_give_valid_answers() -> None:
    model = OpenAIModel("gemma", f"{await llama_cpp_url()}/v1", mode="completions")
    try:
        answers = [
            parse_answer((await model.chat(ChatRequest((Message("user", q),)))).text)
            for q in QUESTIONS
        ]
    finally:
        await model.aclose()
    assert sum(answer is not Answer.INVALID for answer in answers) >= 3


@pytest.mark.local_model
@needs_extra
async def test_local_gemma_gives_margins_and_names_a_place() -> None:
    """llama.cpp's server answers `logprobs`: a yes/no answer comes with P(yes | yes or no)
    on the side of its answer; an open question gets a name's budget (not cut at 3 tokens)."""
    model = open_model("local:gemma3-270m")
    try:
        said = await model.chat(ChatRequest((Message("user", "Is Dublin in Ireland?"),)))
        named = await model.chat(
            ChatRequest(
                (Message("user", "In which country is Connacht located?"),),
                answer_format="open",
            )
        )
    finally:
        await model.aclose()
    assert said.p_yes is not None and 0 < said.p_yes < 1
    assert (said.p_yes > 0.5) == (parse_answer(said.text) is Answer.YES)
    assert named.stopped is None and named.text.strip()  # ended by the model, not the limit
