"""The real small local model (`local:gemma3-270m`, the [local] extra), asked in completions mode."""

from __future__ import annotations

import pytest

from kontest_tui.domain.answers import parse_answer
from kontest_tui.errors import ModelSpecError
from kontest_tui.models.base import ChatRequest, Message
from kontest_tui.models.local import local_extra_available, model_file
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
    with pytest.raises(ModelSpecError, match=r"install with pip install '\.\[local\]'"):
        open_model("local:gemma3-270m")
