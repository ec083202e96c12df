"""Running a plan from the explorer: pause / resume / cancel from the UI thread, the run
itself through the engine's session API (run.api), and asking one extra template.

Runs happen in the event loop of a worker thread; nothing here touches a widget.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kontest_tui.domain.records import Answer, AnswerKey
from kontest_tui.errors import KontestError
from kontest_tui.generate.conversations import build_conversations
from kontest_tui.generate.templates import Template
from kontest_tui.kinds.evaluate import evaluate_all
from kontest_tui.models.base import ChatOptions
from kontest_tui.models.specs import open_model
from kontest_tui.oracles.evaluate import Evaluation
from kontest_tui.run.api import SessionSpec, extend_session, resume_session, start_session
from kontest_tui.run.executor import Executor, ExecutorEvents
from kontest_tui.tui.plan import SessionPlan, SessionResult
from kontest_tui.tui.sessions import load_session_result, open_store


class RunControl:
    """Pause / resume / cancel for a run that executes in another thread's event loop.

    The executor is attached from the run thread; every control call is handed to that
    loop with `call_soon_threadsafe`, so the UI thread never touches it directly.
    """

    def __init__(self) -> None:
        self.executor: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._paused = False
        self._cancelled = False
        self._lock = threading.Lock()

    def attach(self, executor: Any) -> None:
        """Called in the run's loop before it starts."""
        with self._lock:
            self.executor = executor
            self.loop = asyncio.get_running_loop()
            if self._paused:
                executor.pause()
            if self._cancelled:
                executor.cancel()

    def _forward(self, method: str) -> None:
        with self._lock:
            if self.executor is not None and self.loop is not None and not self.loop.is_closed():
                self.loop.call_soon_threadsafe(getattr(self.executor, method))

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def pause(self) -> None:
        self._paused = True
        self._forward("pause")

    def resume(self) -> None:
        self._paused = False
        self._forward("resume")

    def cancel(self) -> None:
        self._cancelled = True
        self._forward("cancel")


TokenHandler = Callable[[str, int, str], None]
ResponseHandler = Callable[[Any], None]


@dataclass
class RunOutcome:
    """How a run ended: the stored session (if any), cancelled or not, its evaluation."""

    session_id: str | None
    cancelled: bool
    evaluation: Evaluation | None = None


def chat_options_for(plan: SessionPlan) -> ChatOptions:
    """The session's generation options: the template set's prompt and temperature."""
    if plan.template_set is None:
        return ChatOptions(temperature=0.0, system_prompt=None)
    return ChatOptions(
        temperature=float(plan.template_set.temperature),
        system_prompt=plan.template_set.system_prompt,
    )


async def run_plan(
    plan: SessionPlan,
    *,
    on_token: TokenHandler,
    on_response: ResponseHandler,
    control: RunControl,
    db: str | Path | None = None,
    store_session: bool = True,
) -> RunOutcome:
    """Ask the model every conversation of `plan`: a stored session through run.api
    (when `store_session`), else the executor alone. Call it in the loop of a worker thread."""
    events = ExecutorEvents(on_token=on_token, on_response=on_response)
    if store_session:
        store = open_store(db)
        try:
            # Never in chunks (stream=False): the results screen lists every verdict, and the
            # plan holds the whole session in memory already.
            if plan.resume_id:
                # The same engine resume as `kontest run --resume ID`: only missing turns
                # are asked.
                outcome = await resume_session(
                    store,
                    plan.resume_id,
                    events=events,
                    on_executor=control.attach,
                    stream=False,
                )
            else:
                outcome = await start_session(
                    store,
                    _session_spec(plan),
                    events=events,
                    on_executor=control.attach,
                    stream=False,
                )
        finally:
            store.close()
        return RunOutcome(
            session_id=outcome.session_id,
            cancelled=outcome.status == "cancelled",
            evaluation=outcome.evaluation,
        )
    model = open_model(plan.model_spec, kg=plan.kg)
    try:
        await model.check()
        executor = Executor(model, chat_options_for(plan), events=events)
        control.attach(executor)
        result = await executor.run(plan.conversations)
        return RunOutcome(session_id=None, cancelled=bool(result.cancelled))
    finally:
        await model.aclose()


async def ask_extra_template(
    result: SessionResult, template: Template, db: str | Path | None
) -> SessionResult:
    """Ask only `template`'s atomic questions against the session's model, then re-evaluate
    the session with them so its gap sits next to the other templates'. A stored session
    keeps the new answers (run.api.extend_session): its report, gap and ensemble include
    them when it is opened again."""
    if result.session_id is not None:
        store = open_store(db)
        try:
            await extend_session(store, result.session_id, template)
        finally:
            store.close()
        return await asyncio.to_thread(load_session_result, db, result.session_id)
    plan = result.plan
    if plan.template_set is None:
        raise KontestError("this session's templates cannot be read; no template can be added")
    extended_set = dataclasses.replace(
        plan.template_set, templates=(*plan.template_set.templates, template)
    )
    new_conversations = await asyncio.to_thread(
        build_conversations, plan.kg, plan.relations, extended_set, [template.id]
    )
    extra_plan = dataclasses.replace(
        plan, conversations=new_conversations, template_set=extended_set
    )
    raw: dict[AnswerKey, str] = {}
    answers: dict[AnswerKey, Answer] = {}

    def keep(response: Any) -> None:
        raw[(response.conversation_id, response.turn)] = response.raw
        answers[(response.conversation_id, response.turn)] = response.answer

    await run_plan(
        extra_plan,
        on_token=lambda *_: None,
        on_response=keep,
        control=RunControl(),
        db=db,
        store_session=False,
    )
    merged_plan = dataclasses.replace(
        plan,
        conversations=[*plan.conversations, *new_conversations],
        template_set=extended_set,
        template_ids=[*plan.template_ids, template.id],
    )
    merged = SessionResult(
        plan=merged_plan,
        raw={**result.raw, **raw},
        answers={**result.answers, **answers},
        session_id=result.session_id,
    )
    merged.evaluation = await asyncio.to_thread(
        evaluate_all,
        merged_plan.relations,
        merged_plan.conversations,
        merged.answers,
        merged.raw,
        session=result.session_id,
        model=plan.model_spec,
    )
    return merged


def _session_spec(plan: SessionPlan) -> SessionSpec:
    """The engine's description of the session the plan asks for."""
    return SessionSpec(
        plan.kg,
        model=plan.model_spec,
        kg_name=plan.kg_source,
        depth=plan.depth,
        per_path=plan.per_path,
        template_set=plan.template_set,
        template_ids=plan.template_ids,
        options=chat_options_for(plan),
        relations=plan.relations,
        # Every kind's conversations (annotated questions too) are in the plan already and
        # are stored as they are; the session's kinds are read from them, the questions
        # file's skipped lines kept beside them.
        conversations=plan.conversations,
        kind_options=plan.kind_options,
        problems=list(plan.problems),
    )
