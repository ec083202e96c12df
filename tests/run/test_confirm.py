"""Confirming a session's errors over real HTTP (the simulated model served by `SimServer` at a
temperature of 0.8): every error marked, the calls within the bound and counted apart, each
new sample with its own seed, a rerun reproducing every draw, the status kept through an
evaluation again, shown in the report, the card and the Errors list (confirmed first)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kontest_tui.domain.records import Answer
from kontest_tui.domain.seeds import draw_seed
from kontest_tui.kg.io import load_graph
from kontest_tui.models.base import ChatOptions, Message
from kontest_tui.models.sim.server import SimServer, Turn
from kontest_tui.oracles.confirmation import CONFIRMED, DRAW, STATUSES
from kontest_tui.report.explain_render import card_text
from kontest_tui.report.explain_store import render_named_report, stored_cards
from kontest_tui.run.api import (
    SessionSpec,
    confirm_errors,
    evaluation_engine,
    refresh_report,
    session_report,
    start_session,
)
from kontest_tui.store.database import Store
from kontest_tui.store.view_records import ErrorFilter
from tests.support.tui import TEN_RELATIONS

MODEL_SEED = 7


def turns_of_test(store: Store, session_id: str, refs: tuple[tuple[str, int], ...]) -> int:
    """The questions one try of an error asks at most: every compared conversation up to
    its compared turn (the turns before it are its context)."""
    conversations = store.relations.conversations_by_id(session_id, {c for c, _ in refs})
    longest: dict[str, int] = {}
    for conversation_id, turn in refs:
        longest[conversation_id] = max(longest.get(conversation_id, 0), turn + 1)
    assert set(longest) <= set(conversations)
    return sum(longest.values())


async def test_confirming_every_error_of_a_session_at_temperature_08(tmp_path: Path) -> None:
    server = SimServer(kg=load_graph(TEN_RELATIONS))
    url = await server.start()
    try:
        with Store(tmp_path / "s.db") as store:
            spec = SessionSpec(
                TEN_RELATIONS,
                model=f"ollama:default@{url}",
                kg_name="ten",
                options=ChatOptions(temperature=0.8, seed=MODEL_SEED),
            )
            run = await start_session(store, spec, stream=False)
            session_id = run.session_id
            answers = len(store.responses.load(session_id))
            executions = session_report(store, session_id).report["executions"]
            errors = store.verdicts.count_errors(session_id)
            assert errors >= 5
            chats = server.posts["/api/chat"]
            first = await confirm_errors(store, session_id, draws=2, rewordings=0)
            calls = server.posts["/api/chat"] - chats

            # Every error marked; the model called as the outcome says, no more than the
            # questions its tries ask (2 draws and the one other template, t3, each asking
            # the test's questions at most), fewer as shared and the session's own answers
            # are not asked again.
            marked = first.confirmations
            assert len(marked) == errors
            assert {c.status for c in marked} <= set(STATUSES)
            assert all(c.trials == 3 for c in marked)  # 2 draws + t3 (rewordings off)
            bound = sum(c.trials * turns_of_test(store, session_id, c.refs) for c in marked)
            assert calls == first.calls == sum(c.calls for c in marked)
            assert 0 < calls < bound

            # Counted apart: the session's answers, figures and report are as they were.
            assert len(store.responses.load(session_id)) == answers
            assert session_report(store, session_id).report["executions"] == executions

            # Each new sample sent its own seed: the session's model seed, the conversation,
            # the draw (domain.seeds.draw_seed); a rerun sends the same and gets the same.
            draws = [a for c in marked for a in c.answers if a.form == DRAW and a.asked]
            assert draws and all(
                a.seed == draw_seed(MODEL_SEED, a.conversation, a.draw) for a in draws
            )
            second = await confirm_errors(store, session_id, draws=2, rewordings=0)

            def shown(outcome: object) -> dict[object, list[tuple[object, ...]]]:
                return {
                    c.key: [
                        (c.status, a.trial, a.position, a.draw, a.seed, a.question, a.raw)
                        for a in c.answers
                    ]
                    for c in outcome.confirmations  # type: ignore[attr-defined]
                }

            assert shown(second) == shown(first)

            # Two draws of one question differ where the model is unsure: the questions
            # whose samples disagree are nearer a coin toss than those whose samples agree.
            sampled: dict[str, set[Answer]] = {}
            margin: dict[str, float] = {}
            for answer in (a for c in marked for a in c.answers if a.form == DRAW):
                sampled.setdefault(answer.question, set()).add(answer.answer)
                if answer.p_yes is not None:
                    margin[answer.question] = abs(answer.p_yes - 0.5)
            differ = [q for q, got in sampled.items() if len(got) > 1]
            agree = [q for q, got in sampled.items() if len(got) == 1]
            assert differ and agree
            mean = lambda qs: sum(margin[q] for q in qs) / len(qs)  # noqa: E731
            assert mean(differ) < mean(agree)

            # The status shows in the report, the list (confirmed first, filtered) and the card.
            confirmed = [c for c in marked if c.status == CONFIRMED]
            assert confirmed
            text = render_named_report(store, session_id, session_report(store, session_id))
            assert f"Confirmed: {len(confirmed)} of {errors} errors asked again" in text
            assert "[confirmed" in text
            rows = store.error_list.errors(session_id, limit=errors)
            assert [row.status for row in rows[: len(confirmed)]] == [CONFIRMED] * len(confirmed)
            where = ErrorFilter(status=CONFIRMED)
            assert store.error_list.count_errors(session_id, where=where) == len(confirmed)
            (card,) = stored_cards(store, session_id)  # the clearest error: a confirmed one
            assert card.confirmation is not None and card.confirmation.startswith("confirmed:")
            assert "Asked again: confirmed: the contradiction came back in" in card_text(card)
            assert "New sample 1:" in card_text(card) and "P(yes)" in card_text(card)

            # Evaluated again (new verdict rows), each error keeps its status.
            before = {(r.verdict.oracle, r.verdict.refs): r.status for r in rows}
            refresh_report(store, session_id, must_store=True)
            store.views.ensure(session_id, evaluation_engine())
            again = store.error_list.errors(session_id, limit=errors)
            assert {(r.verdict.oracle, r.verdict.refs): r.status for r in again} == before
    finally:
        await server.close()


class SeedLog(SimServer):
    """The simulated model server, noting the seed each chat reached it with."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.asked: list[tuple[tuple[str, ...], object]] = []

    def plan_turn(
        self,
        model: object,
        messages: Sequence[Message],
        seed: object,
        max_tokens: object,
        temperature: object = 0.0,
    ) -> Turn:
        questions = tuple(message.content for message in messages if message.role == "user")
        self.asked.append((questions, seed))
        return super().plan_turn(model, messages, seed, max_tokens, temperature)


async def test_every_conversation_and_every_draw_reaches_the_model_with_its_own_seed(
    tmp_path: Path,
) -> None:
    """At temperature 0.8 over HTTP: each conversation of the session is asked with its own
    seed (a sequential conversation's first turn is not its atomic twin's draw), and the
    two new samples of a confirmed question are two calls with two seeds."""
    server = SeedLog(kg=load_graph(TEN_RELATIONS))
    url = await server.start()
    try:
        with Store(tmp_path / "s.db") as store:
            spec = SessionSpec(
                TEN_RELATIONS,
                model=f"ollama:default@{url}",
                kg_name="ten",
                options=ChatOptions(temperature=0.8, seed=MODEL_SEED),
            )
            session_id = (await start_session(store, spec, stream=False)).session_id
            conversations = store.relations.load_conversations(session_id)
            turns = sum(len(conversation.turns) for conversation in conversations)
            assert len(server.asked) == server.posts["/api/chat"] == turns
            sent = {seed for _questions, seed in server.asked}
            assert sent == {draw_seed(MODEL_SEED, c.id) for c in conversations}

            del server.asked[:]
            outcome = await confirm_errors(store, session_id, draws=2, rewordings=0)
            draws = [a for c in outcome.confirmations for a in c.answers if a.form == DRAW]
            by_slot: dict[tuple[str, int], set[tuple[int, object]]] = {}
            for answer in draws:
                by_slot.setdefault((answer.conversation, answer.turn), set()).add(
                    (answer.draw, answer.seed)
                )
            asked = set(server.asked)
            for (conversation_id, turn), samples in by_slot.items():
                (conversation,) = [c for c in conversations if c.id == conversation_id]
                chat = tuple(query.text for query in conversation.turns[: turn + 1])
                new = {(draw, seed) for draw, seed in samples if draw > 0}
                assert {draw for draw, _seed in new} == {1, 2}
                seeds = {seed for _draw, seed in new}
                assert seeds == {draw_seed(MODEL_SEED, conversation_id, d) for d in (1, 2)}
                assert {(chat, seed) for seed in seeds} <= asked  # both reached the server
    finally:
        await server.close()
