"""CLI commands over sessions: run (with --resume), report, sessions, export, ensemble.

Thin layer: options are parsed here, everything else is the session API (`run.api`:
start, resume, load), `report` (render, export) and `mitigate.ensemble`. A run shows a one-line progress bar on stderr and
prints the text report at the end; Ctrl-C leaves the store consistent and exits 130.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
import signal
import sys
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

import click

from kontest_tui.cli.kinds import parse_rules
from kontest_tui.cli.scope_options import entity_option
from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.sample import parse_sample
from kontest_tui.generate.templates import TemplateSet, load_template_set
from kontest_tui.kinds.registry import KindOptions, parse_kinds
from kontest_tui.models.base import ChatOptions
from kontest_tui.oracles.evaluate import headline_title
from kontest_tui.paths import write_text_atomic
from kontest_tui.report.export import EXPORT_FORMATS, export_probes, export_session
from kontest_tui.run.api import (
    SessionOutcome,
    SessionSpec,
    add_template,
    create_session,
    prepare,
    refresh_report,
    resume_session,
    session_report,
    start_session,
)
from kontest_tui.run.executor import ExecutorConfig, ExecutorEvents, Progress
from kontest_tui.run.session import failed_message
from kontest_tui.store.database import Store

REPORT_FORMATS = ("text", "json", "markdown", "csv")


def _db_option(function: Any) -> Any:
    return click.option(
        "--db",
        type=click.Path(dir_okay=False),
        default=None,
        help="Session database (default: the user data directory's sessions.db).",
    )(function)


def _open_store(ctx: click.Context, db: str | None, *, create: bool = True) -> Store:
    """The store named by --db, else the group's --db, else the default path."""
    if db is None and ctx.parent is not None:
        db = ctx.parent.params.get("db")
    return Store(db, create=create)


# -- progress bar ----------------------------------------------------------------------------


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def format_progress(progress: Progress, width: int = 20) -> str:
    """One line: bar, done/total, errors by type, invalid, retries, rate, ETA."""
    total = max(progress.total, 1)
    filled = int(width * progress.finished / total)
    errors = " ".join(f"{name}x{count}" for name, count in sorted(progress.errors.items()))
    parts = [
        f"[{'#' * filled}{'.' * (width - filled)}] {progress.finished}/{progress.total}",
        f"errors {errors or '0'}",
        f"invalid {progress.invalid}",
        f"retries {progress.retries}",
    ]
    if progress.cached:
        parts.append(f"cached {progress.cached}")
    parts.append(f"{progress.rate:.1f}/s")
    parts.append(f"ETA {_clock(progress.eta)}")
    return " | ".join(parts)


class ProgressLine:
    """Redraws the progress line on a terminal (at most 10 times a second); elsewhere prints
    a line at every tenth of the work."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._last = 0.0
        self._step = -1
        self._width = 0

    def update(self, progress: Progress) -> None:
        now = time.monotonic()
        if self.tty:
            if now - self._last < 0.1 and progress.finished < progress.total:
                return
            self._last = now
            line = format_progress(progress)
            self.stream.write("\r" + line.ljust(self._width))
            self._width = len(line)
            self.stream.flush()
            return
        step = progress.finished * 10 // max(progress.total, 1)
        if step != self._step:
            self._step = step
            self.stream.write(format_progress(progress) + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self.tty and self._width:
            self.stream.write("\n")
            self.stream.flush()


# -- kontest run -----------------------------------------------------------------------------


def _parse_template_ids(value: str | None) -> tuple[str, ...] | None:
    if value is None or not value.strip():
        return None
    ids = tuple(part.strip() for part in value.split(","))
    if any(not part for part in ids):
        raise InvalidInputError(f"--template-ids: empty id in {value!r}")
    return ids


async def _run(
    going: Callable[[], Coroutine[Any, Any, SessionOutcome]], started: dict[str, str]
) -> SessionOutcome:
    """Start or resume the session (the API checks the model first, one line on failure,
    before any session is stored), SIGTERM cancelling it as Ctrl-C does."""
    _cancel_on_sigterm(started)
    return await going()


def _announce(store: Store, started: dict[str, str]) -> Callable[[str], None]:
    """An on_created callback: keep the id (for the interrupt message) and name the session."""

    def created(session_id: str) -> None:
        started["id"] = session_id
        click.echo(
            f"session {session_id}: model {store.get_session(session_id)['model']}", err=True
        )

    return created


def _cancel_on_sigterm(started: dict[str, str]) -> None:
    """SIGTERM, and SIGHUP (the terminal or SSH session gone), stop the run as Ctrl-C does
    (the session is marked cancelled, its lease given back, the answers so far stay stored);
    `started["signal"]` records which for the message and the exit code."""
    task = asyncio.current_task()
    if task is None:
        return

    def stop(what: str) -> None:
        started["signal"] = what
        task.cancel()

    loop = asyncio.get_running_loop()
    for number, what in ((signal.SIGTERM, "terminated"), (signal.SIGHUP, "hung up")):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError, AttributeError):
            loop.add_signal_handler(number, stop, what)


@click.command("run")
@click.option(
    "--kg", "kg_source", default=None, help="KG file or sample name (places, music, ...)."
)
@click.option("--model", "model_spec", default=None, help="Model spec (default sim).")
@_db_option
@click.option("--depth", type=click.IntRange(min=1), default=None, help="Maximum path length.")
@entity_option
@click.option("--per-path", is_flag=True, help="Count every pair on every path (paper tables).")
@click.option("--templates", default=None, help="Template set: a domain name or a .toml file.")
@click.option(
    "--template-ids", default=None, help="Comma-separated template ids (default: first two)."
)
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True)
@click.option(
    "--limit", type=click.IntRange(min=1), default=None, help="Only the first N relations."
)
@click.option(
    "--sample",
    "sample",
    default=None,
    metavar="N|P%",
    help="Ask a seeded random sample of N relations (or P% of them), stratified by "
    "relation type and depth; the report gives every rate a 95% interval.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the sample (--sample), the kinds' options (distractors, option order, "
    "variants) and the retry jitter; not the model's (--model-seed).",
)
@click.option(
    "--model-seed",
    "model_seed",
    type=int,
    default=None,
    help="The model's seed: sent to the model (Ollama, OpenAI) and seeding the simulated one "
    "(default: none sent; the simulated model's 0).",
)
@click.option(
    "--fresh-conversations",
    "fresh_conversations",
    is_flag=True,
    help="Ask every conversation from scratch (the KONTEST paper's setting: a sequential "
    "conversation's first turn is asked again, not taken from its atomic question); the "
    "report adds the stability test (the two answers to that same question).",
)
@click.option(
    "--temperature",
    type=click.FloatRange(0.0, 2.0),
    default=None,
    help="0 to 2 (what OpenAI's API takes). Default: the template set's (0).",
)
@click.option(
    "--think",
    is_flag=True,
    help="Let a thinking model (Ollama: qwen3, deepseek-r1) think before it answers; "
    'without it Ollama requests say "think": false.',
)
@click.option("--system-prompt", default=None, help="Default: the template set's prompt.")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None)
@click.option("--timeout", type=click.FloatRange(min=0.001), default=60.0, show_default=True)
@click.option(
    "--max-attempts",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="Calls per turn when the model fails with a retryable error.",
)
@click.option(
    "--rate-limit",
    type=click.FloatRange(min=0.001),
    default=None,
    help="At most this many model calls per second.",
)
@click.option(
    "--reuse-cache",
    is_flag=True,
    help="Reuse answers earlier sessions got for the same chat (default: ask the model).",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Ask every turn, even a request this session already asked (no reuse at all).",
)
@click.option(
    "--resume",
    "resume",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[SESSION]",
    help="Go on with a session (the latest unfinished one when no id is given).",
)
@click.option(
    "--retry-errors",
    is_flag=True,
    help="With --resume: also take a done session (--resume always asks failed turns again).",
)
@click.option(
    "--add-template",
    "add_template_id",
    default=None,
    metavar="ID",
    help="With --resume SESSION: ask the session one more template (ID of "
    "--templates FILE, or of your copy of the domain's set) and store its answers.",
)
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    metavar="KIND[,KIND]",
    help="Test kinds to ask: kontest, variant, factcheck, logic (repeat or "
    "comma-separate; default kontest).",
)
@click.option(
    "--variants", is_flag=True, help="Also ask covering-array variants (= --kind variant)."
)
@click.option(
    "--strength",
    type=click.IntRange(1, 4),
    default=2,
    show_default=True,
    help="Covering-array strength t of the variants.",
)
@click.option(
    "--variant-limit",
    type=click.IntRange(min=1),
    default=None,
    help="At most this many variants per question.",
)
@click.option(
    "--postfix",
    is_flag=True,
    help='Variants end with "? Return a JSON Boolean." and answers are read as JSON.',
)
@click.option(
    "--probes",
    "probes",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="A probe file (TOML, as assets/probes/<domain>.toml) for the FactChecker and logic "
    "questions instead of the domain's: e.g. symmetric = true turns the symmetric rule on.",
)
@click.option(
    "--rules",
    "rules",
    default=None,
    metavar="RULE[,RULE]",
    help="Logic rules to ask: negation, symmetric, inverse, transitive, composite (default all).",
)
@click.option(
    "--questions",
    "questions",
    type=click.Path(dir_okay=False),
    default=None,
    help="A JSONL file of BoolQ-style annotated questions to ask (with variants).",
)
@click.option(
    "--batch-out",
    "batch_out",
    type=click.Path(file_okay=False),
    default=None,
    help="Batch mode: write the pending requests as OpenAI Batch API JSONL into this "
    "folder instead of asking the model.",
)
@click.option(
    "--batch-in",
    "batch_in",
    type=click.Path(dir_okay=False),
    default=None,
    help="With --resume: store a batch engine's results file, then write the next "
    "phase's requests (or finish the session).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.pass_context
def run_command(
    ctx: click.Context,
    kg_source: str | None,
    model_spec: str | None,
    db: str | None,
    depth: int | None,
    entities: tuple[str, ...],
    per_path: bool,
    templates: str | None,
    template_ids: str | None,
    concurrency: int,
    limit: int | None,
    sample: str | None,
    seed: int,
    model_seed: int | None,
    fresh_conversations: bool,
    temperature: float | None,
    think: bool,
    system_prompt: str | None,
    max_tokens: int | None,
    timeout: float,
    max_attempts: int,
    rate_limit: float | None,
    reuse_cache: bool,
    no_cache: bool,
    resume: str | None,
    retry_errors: bool,
    add_template_id: str | None,
    kinds: tuple[str, ...],
    variants: bool,
    strength: int,
    variant_limit: int | None,
    postfix: bool,
    probes: str | None,
    rules: str | None,
    questions: str | None,
    batch_out: str | None,
    batch_in: str | None,
    quiet: bool,
) -> None:
    """Ask a model every conversation of a KG (or resume a session) and print the report."""
    if model_spec is not None and not model_spec.strip():
        raise InvalidInputError("empty model spec (try sim, ollama:MODEL or openai:MODEL)")
    batching = batch_out is not None or batch_in is not None
    if sample is not None and resume is not None:
        raise InvalidInputError(
            "--sample draws a new session's relations; a resumed one keeps its own"
        )
    if batch_in is not None and resume is None:
        raise InvalidInputError("--batch-in needs --resume SESSION (the session it answers)")
    store = _open_store(ctx, db)
    try:
        config = ExecutorConfig(
            concurrency=concurrency,
            max_attempts=max_attempts,
            rate_limit=rate_limit,
            use_cache=reuse_cache and not no_cache,
            share_answers=not no_cache,
            jitter_seed=seed,
        )
        bar = None if quiet else ProgressLine()
        events = ExecutorEvents(on_progress=bar.update if bar is not None else None)
        started: dict[str, str] = {}
        going: Callable[[], Coroutine[Any, Any, SessionOutcome]]
        if add_template_id is not None:
            if not resume:
                raise InvalidInputError("--add-template needs --resume SESSION (the session's id)")
            _add_template(store, resume, add_template_id, templates)
        if resume is not None:
            if batching:
                session_id = store.resolve_session(resume or None, unfinished=True)
                _batch_phase(ctx, db, store, session_id, batch_in, batch_out)
                return

            if model_spec is None:  # the session's stored URL: is the key sent there?
                from kontest_tui.models.specs import withheld_key

                stored = store.get_session(
                    store.resolve_session(resume or None, unfinished=not retry_errors)
                )["model"]
                note = withheld_key(stored)
                if note is not None:
                    click.echo(f"kontest: note: {note}", err=True)

            def going() -> Coroutine[Any, Any, SessionOutcome]:
                return resume_session(
                    store,
                    resume or None,
                    model=model_spec,
                    retry_errors=retry_errors,
                    config=config,
                    events=events,
                    on_created=_announce(store, started),
                )

        else:
            if kg_source is None and questions is None:
                raise InvalidInputError("--kg or --questions is required (or --resume a session)")
            sample_spec = parse_sample(sample, seed) if sample is not None else None
            if sample_spec is not None and (limit is not None or kg_source is None):
                raise InvalidInputError(
                    "--sample draws from the relations of a --kg, and not together with --limit"
                )
            chosen_kinds = parse_kinds([*kinds, *(["variant"] if variants else [])] or ["kontest"])
            kind_options = KindOptions(
                seed=seed,
                strength=strength,
                variant_limit=variant_limit,
                postfix=postfix,
                rules=parse_rules(rules),
                probes=str(Path(probes).resolve()) if probes else None,
            )
            spec = SessionSpec(
                kg_source,
                model="sim" if model_spec is None else model_spec,
                entities=entities,
                depth=depth,
                per_path=per_path,
                template_set=templates,
                template_ids=_parse_template_ids(template_ids),
                kinds=chosen_kinds if kg_source is not None else (),
                kind_options=kind_options,
                questions=questions,
                seed=seed,
                limit=limit,
                sample=sample_spec,
                config=config,
                fresh_conversations=fresh_conversations,
            )
            # The same door as the explorer's: resolve (load, scope, read the questions
            # file) and check; the first problem is the one line a bad input gets.
            preparation = prepare(spec, detail=False)
            for problem in preparation.spec.problems:  # lines the questions file skipped
                click.echo(f"kontest: skipped {problem}", err=True)
            if preparation.problems:
                preparation.problems[0].raise_error()
            template_set = preparation.spec.template_set
            assert isinstance(template_set, TemplateSet)
            spec = replace(
                preparation.spec,
                options=ChatOptions(
                    temperature=template_set.temperature if temperature is None else temperature,
                    seed=model_seed,
                    max_tokens=max_tokens,
                    timeout=timeout,
                    system_prompt=system_prompt,
                    think=think,
                ),
            )

            if batching:
                from kontest_tui.models.specs import parse_model_spec
                from kontest_tui.run.batch import check_batch_model

                check_batch_model(spec.model)  # before anything is stored
                created = create_session(store, spec, parse_model_spec(spec.model).spec)
                click.echo(
                    f"session {created}: model {store.get_session(created)['model']}", err=True
                )
                _batch_phase(ctx, db, store, created, None, batch_out)
                return

            def going() -> Coroutine[Any, Any, SessionOutcome]:
                return start_session(
                    store, spec, events=events, on_created=_announce(store, started)
                )

        try:
            outcome = asyncio.run(_run(going, started))
        except (KeyboardInterrupt, asyncio.CancelledError):
            if bar is not None:
                bar.close()
            what = started.get("signal", "interrupted")
            if "id" in started:
                click.echo(
                    f"kontest: {what}; resume with {resume_command(started['id'], _db_arg(ctx, db))}",
                    err=True,
                )
            else:
                click.echo(f"kontest: {what} before the session started", err=True)
            ctx.exit({"terminated": 143, "hung up": 129}.get(what, 130))
        session_id = started["id"]
        if bar is not None:
            bar.close()
        from kontest_tui.report.render import render_report

        progress = outcome.result.progress
        click.echo(
            f"session {session_id} {outcome.status}: {progress.finished}/{progress.total} turns, "
            f"{progress.failed} failed, {progress.retries} retries",
            err=True,
        )
        shown = (  # a streamed run's verdicts are in the store, not in its outcome
            session_report(store, session_id) if outcome.evaluation.streamed else outcome.evaluation
        )
        click.echo(render_report(shown, "text"), nl=False)
        failed = outcome.evaluation.failed
        if failed:
            click.echo(
                f"kontest: error: {failed_message(failed)} (no answer); ask them again with: "
                f"{resume_command(session_id, _db_arg(ctx, db))}",
                err=True,
            )
            ctx.exit(1)
    finally:
        store.close_after(failed=sys.exc_info()[0] is not None)


def _batch_phase(
    ctx: click.Context,
    db: str | None,
    store: Store,
    session_id: str,
    batch_in: str | None,
    batch_out: str | None,
) -> None:
    """One step of batch mode (run.batch.batch_phase), told on stderr; the report at the end."""
    from kontest_tui.run.batch import batch_phase

    phase = batch_phase(
        store,
        session_id,
        Path(batch_in) if batch_in is not None else None,
        Path(batch_out) if batch_out is not None else None,
    )
    if phase.ingested is not None:
        ingested = phase.ingested
        ignored = (
            f" ({ingested.ignored} lines for no pending turn ignored)" if ingested.ignored else ""
        )
        click.echo(
            f"session {session_id}: stored {ingested.answered} answers and {ingested.failed} "
            f"failed turns from {batch_in}{ignored}",
            err=True,
        )
    if phase.written is not None:
        resume = resume_command(session_id, _db_arg(ctx, db))
        click.echo(
            f"session {session_id}: wrote {phase.requests} requests ({phase.turns} turns) to "
            f"{phase.written}; run them on a batch engine, then: {resume} --batch-in RESULTS.jsonl",
            err=True,
        )
        return
    assert phase.evaluation is not None
    from kontest_tui.report.render import render_report

    failed = phase.evaluation.failed
    click.echo(f"session {session_id} {'failed' if failed else 'done'}", err=True)
    click.echo(render_report(phase.evaluation, "text"), nl=False)
    if failed:
        click.echo(
            f"kontest: error: {failed_message(failed)} (no answer); request them again with: "
            f"{resume_command(session_id, _db_arg(ctx, db))} --batch-out DIR",
            err=True,
        )
        ctx.exit(1)


def _add_template(store: Store, session_id: str, template_id: str, templates: str | None) -> None:
    """Store one more template's questions in a session (run.api.add_template); the resume
    that follows asks them."""
    session = store.get_session(store.resolve_session(session_id))
    domain = str(session["templates_json"].get("domain") or "")
    template = load_template_set(templates or domain).get(template_id)
    add_template(store, session["id"], template)


def _db_arg(ctx: click.Context, db: str | None) -> str | None:
    """The --db the user gave (to this command or the group), for commands we print."""
    if db is None and ctx.parent is not None:
        db = ctx.parent.params.get("db")
    return db


def resume_command(session_id: str, db: str | None) -> str:
    """The command that goes on with a session (its failed turns asked again)."""
    command = f"kontest run --resume {session_id}"
    return f"{command} --db {shlex.quote(str(db))}" if db else command


# -- kontest report / sessions / export / ensemble -----------------------------------------


@click.command("report")
@click.argument("session", required=False)
@_db_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice((*REPORT_FORMATS, "html")),
    default="text",
    show_default=True,
    help="html: the session explained on one standalone page, with the picture of the model's KG.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write to this file instead of stdout.",
)
@click.option(
    "--re-evaluate",
    "re_evaluate",
    is_flag=True,
    help="Evaluate the stored answers again and store the new verdicts and report.",
)
@click.option(
    "--errors-only",
    "errors_only",
    is_flag=True,
    help="html: draw only the nodes with errors and the way down to them.",
)
@entity_option
@click.option(
    "--depth",
    type=click.IntRange(min=1),
    default=None,
    help="html with --entity: how far below each entity to draw.",
)
@click.pass_context
def report_command(
    ctx: click.Context,
    session: str | None,
    db: str | None,
    fmt: str,
    out: str | None,
    re_evaluate: bool,
    errors_only: bool,
    entities: tuple[str, ...],
    depth: int | None,
) -> None:
    """Print a session's report (the latest session when none is given): the verdicts its
    run stored; when they are stale (other evaluating code, or answers stored after them)
    the answers are evaluated again in memory (nothing is written); --re-evaluate evaluates
    again and stores the result. html: the session explained on one
    standalone page (counts, templates, legend, the picture of the model's KG, every error
    with its questions and replies), read from the store."""
    from kontest_tui.report.render import render_report

    if (errors_only or entities or depth) and fmt != "html":
        raise InvalidInputError("--errors-only, --entity and --depth go with --format html")
    with _open_store(ctx, db, create=False) as store:
        if fmt == "html":
            from kontest_tui.report.session_page import build_session_document, document_html

            if re_evaluate:
                refresh_report(store, store.resolve_session(session))
            text = document_html(
                build_session_document(
                    store, session, errors_only=errors_only, entities=entities, depth=depth
                )
            )
        else:
            session_id = store.resolve_session(session)
            shown = (refresh_report if re_evaluate else session_report)(store, session_id)
            text = render_report(shown, fmt)
    _write(text, out)


def _write(text: str, out: str | None) -> None:
    if out is None:
        click.echo(text, nl=False)
        return
    try:
        write_text_atomic(out, text, newline="")  # a full disk leaves no half export
    except OSError as error:
        raise InvalidInputError(f"cannot write {out}: {error.strerror or error}") from None


@click.command("sessions")
@_db_option
@click.option("--json", "as_json", is_flag=True, help="A JSON list instead of a table.")
@click.pass_context
def sessions_command(ctx: click.Context, db: str | None, as_json: bool) -> None:
    """List the stored sessions, oldest first."""
    with _open_store(ctx, db, create=False) as store:
        rows = list(store.iter_sessions())
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        click.echo("no sessions yet")
        return
    header = (
        "id",
        "status",
        "created",
        "kg",
        "model",
        "answered",
        "failed",
        "stopped",
        "rate",
    )
    table = [
        (
            row["id"],
            row["status"],
            row["created"][:19].replace("T", " "),
            row["kg_name"],
            row["model"],
            f"{row['answered']}/{row['planned']}",
            str(row["failed"]),
            stopped_cell(row["stopped_length"], row["stopped_timeout"]),
            headline_cell(row),
        )
        for row in rows
    ]
    widths = [max(len(str(line[i])) for line in (header, *table)) for i in range(len(header))]
    for line in (header, *table):
        click.echo(
            "  ".join(
                str(cell).ljust(width) for cell, width in zip(line, widths, strict=True)
            ).rstrip()
        )


def headline_cell(row: Mapping[str, Any]) -> str:
    """`29.1% hallucination rate`: a session row's headline rate and what it is
    (oracles.evaluate.headline_of; a row stored before headlines: its KONTEST error rate)."""
    measure, rate = row.get("headline_measure"), row.get("headline_rate")
    if not measure:
        measure, rate = "kontest", row.get("oracle_error_rate")
    return "-" if rate is None else f"{100 * rate:.1f}% {headline_title(str(measure))}"


def stopped_cell(length: int, timeout: int) -> str:
    """Answers cut by the token limit and by the timeout, "-" when none was."""
    parts = [f"{length} length"] if length else []
    parts += [f"{timeout} timeout"] if timeout else []
    return ", ".join(parts) or "-"


@click.command("export")
@click.argument("session", required=False)
@_db_option
@click.option(
    "--format", "fmt", type=click.Choice(EXPORT_FORMATS), default="jsonl", show_default=True
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write to this file instead of stdout.",
)
@click.option(
    "--probes",
    is_flag=True,
    help="The questions asked by hand about its relations (kontest probe, the explorer).",
)
@click.pass_context
def export_command(
    ctx: click.Context,
    session: str | None,
    db: str | None,
    fmt: str,
    out: str | None,
    probes: bool,
) -> None:
    """Export every response of a session (the latest when none is given) as JSONL or CSV."""
    with _open_store(ctx, db, create=False) as store:
        text = export_probes(store, session, fmt) if probes else export_session(store, session, fmt)
    _write(text, out)


@click.command("ensemble")
@click.argument("sessions", nargs=-1, required=True)
@_db_option
@click.option(
    "--k",
    "k",
    type=click.IntRange(min=2),
    default=5,
    show_default=True,
    help="Folds of the cross-validation over relations.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the fold split.")
@click.option(
    "--format", "fmt", type=click.Choice(REPORT_FORMATS), default="text", show_default=True
)
@click.pass_context
def ensemble_command(
    ctx: click.Context, sessions: tuple[str, ...], db: str | None, k: int, seed: int, fmt: str
) -> None:
    """Weighted ensemble vs majority vote over several sessions (one model each, same KG)."""
    from kontest_tui.mitigate.ensemble import cross_validate_sessions
    from kontest_tui.report.render import render_ensemble

    with _open_store(ctx, db, create=False) as store:
        ids = [store.resolve_session(session) for session in sessions]
        result = cross_validate_sessions(store, ids, k=k, seed=seed)
    click.echo(render_ensemble(result, fmt), nl=False)


def register(cli: click.Group) -> None:
    """Attach this module's commands to the main group."""
    for command in (
        run_command,
        report_command,
        sessions_command,
        export_command,
        ensemble_command,
    ):
        cli.add_command(command)
