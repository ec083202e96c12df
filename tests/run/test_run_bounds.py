"""Answers are kept up to domain.answers.MAX_ANSWER_CHARS; the cut is recorded."""

from __future__ import annotations

from kontest_tui.domain.answers import MAX_ANSWER_CHARS, cut_answer
from kontest_tui.models.base import ChatRequest
from kontest_tui.run.executor import ExecutorConfig
from kontest_tui.run.session import run_session
from kontest_tui.store import Store
from tests.run.run_toys import ToyModel, make_conversations, make_relations, store_session

LONG = "Yes, " + "and more " * 20_000  # 180,005 characters


def test_cut_answer() -> None:
    assert cut_answer("Yes") == ("Yes", 0)
    assert cut_answer("abcdef", 4) == ("abcd", 2)
    assert cut_answer("x" * MAX_ANSWER_CHARS) == ("x" * MAX_ANSWER_CHARS, 0)


async def test_a_long_answer_is_cut_and_the_cut_recorded(tmp_path) -> None:  # noqa: ANN001
    relations = make_relations(1)
    conversations = make_conversations(relations)
    seen: list[ChatRequest] = []

    def answer(request: ChatRequest) -> str:
        seen.append(request)
        return LONG

    with Store(tmp_path / "s.db") as store:
        session = store_session(store, relations, conversations)
        outcome = await run_session(
            store,
            session,
            ToyModel(answer),
            config=ExecutorConfig(concurrency=1, use_cache=False, share_answers=False),
        )
        rows = list(store.responses.rows(session))
        assert len(rows) == 6
        assert all(len(row["raw"]) == MAX_ANSWER_CHARS for row in rows)
        assert all(row["cut"] == len(LONG) - MAX_ANSWER_CHARS for row in rows)
        assert all(row["answer"] == "yes" for row in rows)
        assert (
            store.responses.load(session)[rows[0]["conversation"], 0].cut
            == len(LONG) - MAX_ANSWER_CHARS
        )
    assert outcome.evaluation.valid == 6
    # the second turn of a sequential conversation sees the kept text, as a resume would
    second = [request for request in seen if len(request.messages) == 3]
    assert second and all(
        len(request.messages[1].content) == MAX_ANSWER_CHARS for request in second
    )
