"""Probe one relation by hand: type any question (each template's text for the pair is there
to start from), ask the session's model now, watch the answers stream beside what the session
stored for the same question. Probes are stored with the session and change no metric; a
rephrasing worth keeping becomes a template (the template editor opens with it) or its one
changed word a synonym pin.

The screen only calls the engine (run.probe, store.probes, generate.synonyms) in workers.
"""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Button, Header, Input, Static

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.records import Answer
from kontest_tui.errors import KontestError
from kontest_tui.generate.synonyms import pin_value
from kontest_tui.kg.names import NodeNames
from kontest_tui.report.words import describe_fact, read_word
from kontest_tui.run.probe import (
    Phrasing,
    ProbeAnswer,
    ProbeContext,
    check_question,
    probe_context,
    probe_relation,
    store_probe_answers,
    synonym_from_question,
    template_from_question,
)
from kontest_tui.store.database import Store
from kontest_tui.store.probes import StoredProbe
from kontest_tui.tui.widgets.key_footer import KeyFooter
from kontest_tui.tui.workers import WorkerFailures

FLUSH_S = 0.1  # streamed tokens are drawn ten times a second
EXTRA_ROWS = 1  # empty rows for questions of your own


class ProbeScreen(WorkerFailures, Screen[None]):
    """Ask the session's model about one relation now (see the module docstring)."""

    BINDINGS = [
        Binding(
            "ctrl+r",
            "ask",
            "Ask now",
            id="probe_ask",
            tooltip="Ask every question of the list now, each alone, and store the answers",
        ),
        Binding(
            "ctrl+t",
            "make_template",
            "As template",
            id="probe_template",
            tooltip="Open the template editor with the focused question as a new template",
        ),
        Binding(
            "ctrl+o",
            "pin_word",
            "Word → synonym",
            id="probe_synonym",
            tooltip="Pin the one word the focused question changed as a synonym of the "
            "template's word",
        ),
        Binding("escape", "app.pop_screen", "Back", id="probe_back", tooltip="Back"),
    ]

    class ContextLoaded(Message):
        """The relation, its templates and its stored answers were read."""

        def __init__(self, context: ProbeContext) -> None:
            super().__init__()
            self.context = context

    class ProbesAnswered(Message):
        """Every question was answered (or failed) and stored."""

        def __init__(self, answers: list[ProbeAnswer], stored: list[StoredProbe]) -> None:
            super().__init__()
            self.answers = answers
            self.stored = stored

    def __init__(self, db: str | None, session_id: str, relation_id: str) -> None:
        super().__init__()
        self.db = db
        self.session_id = session_id
        self.relation_id = relation_id
        self.context: ProbeContext | None = None
        self.phrasings: list[Phrasing] = []  # one per row, the templates' first
        self.stored_replies: dict[str, tuple[str, Answer]] = {}  # question -> stored reply
        self.streams: dict[int, list[str]] = {}  # row -> tokens so far
        self.asked: list[str] = []  # the questions of the current ask, per row (or "")
        self.results: dict[int, ProbeAnswer] = {}
        self.probe_ids: dict[str, int] = {}  # question -> its stored probe id
        self.ready = False  # the rows are shown (tests wait on it)

    @property
    def selected_relation_id(self) -> str:
        """The relation probed (the synonym editor previews its question)."""
        return self.relation_id

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Reading the relation…", id="probe-title", classes="title", markup=False)
        yield Static(
            "Edit any question or type your own, then ctrl+r asks them all now, each alone. "
            "Probes are stored with the session and change none of its figures.",
            classes="hint",
            markup=False,
        )
        yield VerticalScroll(id="probe-rows")
        with Horizontal(classes="buttons"):
            yield Button("Ask now", id="probe-ask", variant="success")
            yield Button("As template", id="probe-template")
            yield Button("Word → synonym", id="probe-synonym")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.sub_title = "probe a relation"
        self.load_worker()
        self.set_interval(FLUSH_S, self.flush_tokens)

    # -- loading ---------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="probe-load", exit_on_error=False)
    def load_worker(self) -> None:
        with Store(self.db) as store:
            context = probe_context(store, self.session_id, self.relation_id)
        self.post_message(self.ContextLoaded(context))

    def worker_failed(self, group: str, error: BaseException) -> None:
        if group == "probe-load":
            self.query_one("#probe-title", Static).update(f"✗ {error}")

    @on(ContextLoaded)
    async def context_loaded(self, event: ContextLoaded) -> None:
        context = self.context = event.context
        names = NodeNames(context.kg)
        self.query_one("#probe-title", Static).update(
            f"Probe: {describe_fact(context.relation, names)} · model {context.model}"
        )
        for conversation in context.conversations:
            if conversation.kind != "atomic" or str(conversation.test_kind) != "kontest":
                continue
            response = context.responses.get((conversation.id, 0))
            if response is not None and response.error is None:
                question = " ".join(conversation.turns[0].text.split())
                self.stored_replies[question] = (response.raw, response.answer)
        self.phrasings = [*context.phrasings(), *(Phrasing("") for _ in range(EXTRA_ROWS))]
        rows = self.query_one("#probe-rows", VerticalScroll)
        await rows.mount_all(self.make_row(index, p) for index, p in enumerate(self.phrasings))
        self.query(".probe-question").first().focus()
        self.ready = True

    def make_row(self, index: int, phrasing: Phrasing) -> Vertical:
        where = f"template “{phrasing.template}”" if phrasing.template else "a question of your own"
        return Vertical(
            Input(
                phrasing.question,
                placeholder="Type a question of your own",
                id=f"probe-q-{index}",
                classes="probe-question",
                compact=True,
            ),
            Static(where, classes="hint", markup=False),
            Static(
                self.describe_stored(phrasing.question),
                id=f"probe-a-{index}",
                classes="probe-answer",
                markup=False,
            ),
            classes="probe-row",
        )

    def describe_stored(self, question: str, now: Text | None = None) -> Text:
        """`now: …` (when asked) and `stored: …` (what the session has for this question)."""
        text = Text()
        if now is not None:
            text.append("now: ", style="bold")
            text.append_text(now)
            text.append("\n")
        stored = self.stored_replies.get(" ".join(question.split()))
        text.append("stored in the session: ", style="dim")
        if stored is None:
            text.append("not asked in the session", style="dim italic")
        else:
            raw, answer = stored
            text.append(clean_text(raw)[:300])
            text.append(f"  → {read_word(answer)}", style=_style(answer))
        return text

    # -- asking ----------------------------------------------------------------------------

    def current_questions(self) -> list[tuple[int, str]]:
        """(row, question) of every row with a question, as typed now."""
        found = []
        for index in range(len(self.phrasings)):
            value = self.query_one(f"#probe-q-{index}", Input).value
            if value.strip():
                found.append((index, value))
        return found

    @on(Button.Pressed, "#probe-ask")
    def action_ask(self) -> None:
        if self.context is None:
            return
        asked: list[tuple[int, Phrasing]] = []
        for index, value in self.current_questions():
            try:
                question = check_question(value)
            except KontestError as error:
                self.notify(f"Row {index + 1}: {error}", severity="error", markup=False)
                return
            original = self.phrasings[index]
            template = original.template if question == original.question else None
            asked.append((index, Phrasing(question, template)))
        if not asked:
            self.notify("Type a question first", severity="warning", markup=False)
            return
        self.streams = {index: [] for index, _ in asked}
        self.results = {}
        for index, _ in asked:
            self.query_one(f"#probe-a-{index}", Static).update(Text("asking…", style="italic"))
        self.ask_worker(self.context, asked)

    @work(exclusive=True, group="probe-ask", exit_on_error=False)
    async def ask_worker(self, context: ProbeContext, asked: list[tuple[int, Phrasing]]) -> None:
        rows = [index for index, _ in asked]

        def on_token(position: int, token: str) -> None:
            self.streams.setdefault(rows[position], []).append(token)

        answers = await probe_relation(
            context.model,
            context.kg,
            [phrasing for _, phrasing in asked],
            options=context.options,
            seed=context.seed,
            on_token=on_token,
        )
        stored = await asyncio.to_thread(self.store_answers, context, answers)
        self.results = dict(zip(rows, answers, strict=True))
        self.post_message(self.ProbesAnswered(answers, stored))

    def store_answers(self, context: ProbeContext, answers: list[ProbeAnswer]) -> list[StoredProbe]:
        with Store(self.db) as store:
            return store_probe_answers(store, context, answers)

    def flush_tokens(self) -> None:
        """Draw the streamed tokens of the rows still being answered."""
        for index, tokens in self.streams.items():
            if index in self.results or not tokens:
                continue
            streaming = Text(clean_text("".join(tokens))[:300] + " …", style="italic")
            self.query_one(f"#probe-a-{index}", Static).update(
                self.describe_stored(self.phrasings[index].question, streaming)
            )

    @on(ProbesAnswered)
    def probes_answered(self, event: ProbesAnswered) -> None:
        self.probe_ids = {probe.question: probe.id for probe in event.stored}
        for index, answer in self.results.items():
            now = Text()
            if answer.error is not None:
                now.append(f"failed: {answer.error}", style="red")
            else:
                now.append(clean_text(answer.raw)[:300])
                now.append(f"  → {read_word(answer.answer)}", style=_style(answer.answer))
            self.query_one(f"#probe-a-{index}", Static).update(
                self.describe_stored(answer.phrasing.question, now)
            )
        failed = sum(1 for answer in event.answers if answer.error is not None)
        self.notify(
            f"Asked {len(event.answers)} question(s) now"
            + (f", {failed} failed" if failed else "")
            + "; stored with the session (no figure changed)",
            markup=False,
        )

    # -- promoting -------------------------------------------------------------------------

    def focused_row(self) -> int | None:
        focused = self.focused
        if isinstance(focused, Input) and focused.id and focused.id.startswith("probe-q-"):
            return int(focused.id.removeprefix("probe-q-"))
        return None

    @on(Button.Pressed, "#probe-template")
    def action_make_template(self) -> None:
        context, row = self.context, self.focused_row()
        if context is None or row is None:
            self.notify("Put the cursor in a question first", markup=False)
            return
        question = " ".join(self.query_one(f"#probe-q-{row}", Input).value.split())
        text = template_from_question(
            question,
            context.kg.label(context.relation.parent),
            context.kg.label(context.relation.child),
        )
        if text is None:
            self.notify(
                "A template names both entities of the relation once each: "
                f"{context.kg.label(context.relation.parent)} and "
                f"{context.kg.label(context.relation.child)}",
                severity="warning",
                markup=False,
            )
            return
        from kontest_tui.tui.screens.curation import TemplateEditorScreen

        # The probe is promoted once the editor saves (or asks) its template, not now.
        self.app.push_screen(
            TemplateEditorScreen(
                self.session_id,
                db=self.db,
                text=text,
                relation_type=context.relation.type,
                promotes=self.probe_ids.get(question),
            )
        )

    @on(Button.Pressed, "#probe-synonym")
    def action_pin_word(self) -> None:
        context, row = self.context, self.focused_row()
        if context is None or row is None:
            self.notify("Put the cursor in a question first", markup=False)
            return
        phrasing = self.phrasings[row]
        question = self.query_one(f"#probe-q-{row}", Input).value
        found = (
            synonym_from_question(phrasing.template, phrasing.question, question)
            if phrasing.template
            else None
        )
        if found is None:
            self.notify(
                "Change exactly one word of a template's question to pin it as a synonym",
                severity="warning",
                markup=False,
            )
            return
        word, value = found
        try:
            path = pin_value(context.kg.domain, word, value)
        except KontestError as error:
            self.notify(str(error), title=error.title, severity="error", markup=False)
            return
        self.promote(" ".join(question.split()), "synonym")
        self.notify(
            f"Pinned {value!r} for {word!r} in {path}: the variants of the next session use it",
            markup=False,
        )

    def promote(self, question: str, promotion: str) -> None:
        """Mark the stored probe of `question` (when asked) as promoted."""
        probe_id = self.probe_ids.get(question)
        if probe_id is not None:
            self.promote_worker(probe_id, promotion)

    @work(thread=True, group="probe-promote", exit_on_error=False)
    def promote_worker(self, probe_id: int, promotion: str) -> None:
        with Store(self.db) as store:
            store.probes.mark_promoted(probe_id, promotion)


def _style(answer: Answer) -> str:
    return {Answer.YES: "bold green", Answer.NO: "bold red"}.get(answer, "bold yellow")
