"""`kontest run`'s options, declared in the order `--help` lists them, and the typed records
they are gathered into (cli.option_groups): what a new session asks about, its test kinds, the
model and its chat options, how the executor calls it, and resuming. Each record turns itself
into the session API's own objects (run.api.SessionSpec, ChatOptions, ExecutorConfig)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from kontest_tui.cli.db import db_option
from kontest_tui.cli.generate import parse_template_ids
from kontest_tui.cli.kinds import (
    chosen_options,
    kind_names_help,
    shortcut_kinds,
    with_kind_options,
    with_kind_shortcuts,
)
from kontest_tui.cli.scope_options import entity_option
from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.sample import parse_sample
from kontest_tui.kinds.registry import KindOptions, parse_kinds
from kontest_tui.run.api import ChatOptions, ExecutorConfig, SessionSpec

F = TypeVar("F", bound=Callable[..., object])

# `--temperature default`: send no temperature, the server uses its own (reasoning models
# such as OpenAI's o-series and gpt-5 take no other).
SERVER_TEMPERATURE = "default"


class TemperatureType(click.ParamType[float | str, Any]):
    """A temperature from 0 to 2 (what OpenAI's API takes), or `default`: none sent."""

    name = "0..2|default"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float | str:
        text = str(value).strip().lower()
        if text == SERVER_TEMPERATURE:
            return SERVER_TEMPERATURE
        try:
            number = float(text)
        except ValueError:
            number = -1.0
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        if not 0.0 <= number <= 2.0:
            self.fail(f"{value!r} is not a number from 0 to 2 nor 'default'", param, ctx)
        return number


@dataclass(frozen=True, slots=True)
class GraphChoice:
    """What a new session asks about: the KG and its scope, the templates, which relations
    (a limit or a sample), an annotated-questions file, fresh conversations or not."""

    kg_source: str | None
    depth: int | None
    entities: tuple[str, ...]
    per_path: bool
    templates: str | None
    template_ids: str | None
    limit: int | None
    sample: str | None
    questions: str | None
    fresh_conversations: bool


@dataclass(frozen=True, slots=True)
class KindChoice:
    """The test kinds to ask; their options' flags are each kind's own (cli.kinds), read
    from the command's context when the kinds are parsed."""

    kinds: tuple[str, ...]

    def parse(self, seed: int) -> tuple[tuple[str, ...], KindOptions]:
        """The kinds (KONTEST when none is named, by `--kind` or a kind's shortcut flag) and
        their options; one line when a name does not parse."""
        chosen = parse_kinds([*self.kinds, *shortcut_kinds()] or ["kontest"])
        return tuple(chosen), chosen_options(seed)


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """The model spec and the chat options sent with every request."""

    model_spec: str | None
    model_seed: int | None
    temperature: float | str | None  # None: the template set's; SERVER_TEMPERATURE: none sent
    think: bool
    system_prompt: str | None
    max_tokens: int | None
    timeout: float

    def chat_options(self, default_temperature: float) -> ChatOptions:
        """The chat options (the template set's temperature unless one is given)."""
        temperature: float | None = default_temperature
        if self.temperature == SERVER_TEMPERATURE:
            temperature = None
        elif isinstance(self.temperature, float):
            temperature = self.temperature
        return ChatOptions(
            temperature=temperature,
            seed=self.model_seed,
            max_tokens=self.max_tokens,
            timeout=self.timeout,
            system_prompt=self.system_prompt,
            think=self.think,
        )


@dataclass(frozen=True, slots=True)
class ExecutorChoice:
    """How the executor calls the model: concurrency, attempts, rate, the answer cache."""

    concurrency: int
    max_attempts: int
    rate_limit: float | None
    reuse_cache: bool
    no_cache: bool

    def config(self, seed: int) -> ExecutorConfig:
        return ExecutorConfig(
            concurrency=self.concurrency,
            max_attempts=self.max_attempts,
            rate_limit=self.rate_limit,
            use_cache=self.reuse_cache and not self.no_cache,
            share_answers=not self.no_cache,
            jitter_seed=seed,
        )


@dataclass(frozen=True, slots=True)
class ResumeChoice:
    """Going on with a stored session: which one, with its failed turns or one more
    template, or a step of batch mode."""

    resume: str | None  # "" for the latest unfinished session
    retry_errors: bool
    add_template_id: str | None
    batch_out: str | None
    batch_in: str | None

    @property
    def batching(self) -> bool:
        return self.batch_out is not None or self.batch_in is not None


@dataclass(frozen=True, slots=True)
class RunRequest:
    """Everything `kontest run` was asked, as typed records."""

    graph: GraphChoice
    kinds: KindChoice
    model: ModelChoice
    executor: ExecutorChoice
    resume: ResumeChoice
    seed: int
    confirm: bool  # ask the run's errors again at its end (run.confirm)

    def check(self) -> None:
        """The options that do not go together, one line each (before the store opens)."""
        spec = self.model.model_spec
        if spec is not None and not spec.strip():
            raise InvalidInputError("empty model spec (try sim, ollama:MODEL or openai:MODEL)")
        if self.graph.sample is not None and self.resume.resume is not None:
            raise InvalidInputError(
                "--sample draws a new session's relations; a resumed one keeps its own"
            )
        if self.resume.batch_in is not None and self.resume.resume is None:
            raise InvalidInputError("--batch-in needs --resume SESSION (the session it answers)")
        if self.resume.retry_errors and self.resume.resume is None:
            raise InvalidInputError(
                "--retry-errors goes with --resume [SESSION]: a new session has no failed"
                " turns to ask again"
            )

    def session_spec(self) -> SessionSpec:
        """The new session the options describe (its chat options come after `prepare`,
        which loads the template set whose temperature is the default)."""
        graph = self.graph
        if graph.kg_source is None and graph.questions is None:
            raise InvalidInputError("--kg or --questions is required (or --resume a session)")
        sample = parse_sample(graph.sample, self.seed) if graph.sample is not None else None
        if sample is not None and (graph.limit is not None or graph.kg_source is None):
            raise InvalidInputError(
                "--sample draws from the relations of a --kg, and not together with --limit"
            )
        kinds, kind_options = self.kinds.parse(self.seed)
        return SessionSpec(
            graph.kg_source,
            model="sim" if self.model.model_spec is None else self.model.model_spec,
            entities=graph.entities,
            depth=graph.depth,
            per_path=graph.per_path,
            template_set=graph.templates,
            template_ids=parse_template_ids(graph.template_ids),
            kinds=kinds if graph.kg_source is not None else (),
            kind_options=kind_options,
            questions=graph.questions,
            seed=self.seed,
            limit=graph.limit,
            sample=sample,
            config=self.executor.config(self.seed),
            fresh_conversations=graph.fresh_conversations,
        )


def _options(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """The decorators applied in the order given (the first one listed first by --help)."""

    def apply(function: F) -> F:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


run_options = _options(
    click.option(
        "--kg", "kg_source", default=None, help="KG file or sample name (places, music, ...)."
    ),
    click.option("--model", "model_spec", default=None, help="Model spec (default sim)."),
    db_option,
    click.option("--depth", type=click.IntRange(min=1), default=None, help="Maximum path length."),
    entity_option,
    click.option("--per-path", is_flag=True, help="Count every pair on every path (paper tables)."),
    click.option(
        "--templates",
        default=None,
        help="Template set: paper (the papers' exact texts), natural (the default), a domain or a .toml file.",
    ),
    click.option(
        "--template-ids", default=None, help="Comma-separated template ids (default: first two)."
    ),
    click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True),
    click.option(
        "--limit", type=click.IntRange(min=1), default=None, help="Only the first N relations."
    ),
    click.option(
        "--sample",
        "sample",
        default=None,
        metavar="N|P%",
        help="Ask a seeded random sample of N relations (or P% of them), stratified by "
        "relation type and depth; the report gives every rate a 95% interval.",
    ),
    click.option(
        "--seed",
        type=int,
        default=0,
        show_default=True,
        help="Seed of the sample (--sample), the kinds' options (distractors, option order, "
        "variants) and the retry jitter; not the model's (--model-seed).",
    ),
    click.option(
        "--model-seed",
        "model_seed",
        type=int,
        default=None,
        help="The model's seed: sent to the model (Ollama, OpenAI) and seeding the simulated "
        "one (default: none sent; the simulated model's 0).",
    ),
    click.option(
        "--fresh-conversations",
        "fresh_conversations",
        is_flag=True,
        help="Ask every conversation from scratch (the KONTEST paper's setting: a sequential "
        "conversation's first turn is asked again, not taken from its atomic question); the "
        "report adds the stability test (the two answers to that same question).",
    ),
    click.option(
        "--temperature",
        type=TemperatureType(),
        default=None,
        metavar="0..2|default",
        help="0 to 2 (what OpenAI's API takes), or 'default' to send none (the server's own: "
        "reasoning models such as OpenAI's o-series take no other). Default: the template "
        "set's (0).",
    ),
    click.option(
        "--think",
        is_flag=True,
        help="Let a thinking model (Ollama: qwen3, deepseek-r1) think before it answers; "
        'without it Ollama requests say "think": false.',
    ),
    click.option("--system-prompt", default=None, help="Default: the template set's prompt."),
    click.option("--max-tokens", type=click.IntRange(min=1), default=None),
    click.option("--timeout", type=click.FloatRange(min=0.001), default=60.0, show_default=True),
    click.option(
        "--max-attempts",
        type=click.IntRange(min=1),
        default=4,
        show_default=True,
        help="Calls per turn when the model fails with a retryable error.",
    ),
    click.option(
        "--rate-limit",
        type=click.FloatRange(min=0.001),
        default=None,
        help="At most this many model calls per second.",
    ),
    click.option(
        "--reuse-cache",
        is_flag=True,
        help="Reuse answers earlier sessions got for the same chat (default: ask the model).",
    ),
    click.option(
        "--no-cache",
        is_flag=True,
        help="Ask every turn, even a request this session already asked (no reuse at all).",
    ),
    click.option(
        "--resume",
        "resume",
        is_flag=False,
        flag_value="",
        default=None,
        metavar="[SESSION]",
        help="Go on with a session (the latest unfinished one when no id is given).",
    ),
    click.option(
        "--retry-errors",
        is_flag=True,
        help="With --resume (an error without it): also take a done session (--resume always "
        "asks failed turns again).",
    ),
    click.option(
        "--add-template",
        "add_template_id",
        default=None,
        metavar="ID",
        help="With --resume SESSION: ask the session one more template (ID of "
        "--templates FILE, or of your copy of the domain's set) and store its answers.",
    ),
    click.option(
        "--kind",
        "kinds",
        multiple=True,
        metavar="KIND[,KIND]",
        help=f"Test kinds to ask: {kind_names_help()} (repeat or comma-separate; default kontest).",
    ),
    with_kind_shortcuts,  # --variants: a kind's own flag, declared by the kind
    with_kind_options,  # each kind's options (--strength, --rules, ...), declared by the kind
    click.option(
        "--questions",
        "questions",
        type=click.Path(dir_okay=False),
        default=None,
        help="A JSONL file of BoolQ-style annotated questions to ask (with variants).",
    ),
    click.option(
        "--batch-out",
        "batch_out",
        type=click.Path(file_okay=False),
        default=None,
        help="Batch mode: write the pending requests as OpenAI Batch API JSONL into this "
        "folder instead of asking the model.",
    ),
    click.option(
        "--batch-in",
        "batch_in",
        type=click.Path(dir_okay=False),
        default=None,
        help="With --resume: store a batch engine's results file, then write the next "
        "phase's requests (or finish the session).",
    ),
    click.option(
        "--confirm",
        is_flag=True,
        help="At the end, ask the run's errors again (other phrasings; new samples at a "
        "temperature above 0) and mark each confirmed, mixed or not reproduced, as "
        "kontest confirm does; its calls are counted apart.",
    ),
    click.option("--quiet", "-q", is_flag=True, help="No progress bar."),
)
