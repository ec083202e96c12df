"""`kontest probe`: ask every phrasing of one relation now and print the answers side by side.

Thin layer over `run.probe`: the phrasings are each template's text filled for the pair plus
the questions given; with `--session` the session's KG, model, options and templates are
used and the probes are stored with it (they change none of its metrics).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from kontest_tui.cli.output import echo_out
from kontest_tui.errors import InvalidInputError

if TYPE_CHECKING:  # the engine is imported when the command runs
    from kontest_tui.run.probe import ProbeAnswer


@click.command("probe")
@click.option("--kg", "kg_name", default=None, help="KG file or sample name (places, music, ...).")
@click.option(
    "--relation",
    required=True,
    metavar="PARENT>CHILD",
    help="The relation, as ids or labels: 'Ulster>Kinawley', 'Q27>Q6410645' (with --session "
    "also the relation's id).",
)
@click.option(
    "--model", "model_spec", default=None, help="Model spec (default sim, or the session's)."
)
@click.option(
    "--question",
    "questions",
    multiple=True,
    metavar="TEXT",
    help="A question of your own, asked beside the templates' (repeatable).",
)
@click.option(
    "--session",
    default=None,
    help="Probe a relation of this stored session (its KG, model, templates); store the probes.",
)
@click.option(
    "--templates",
    "templates_choice",
    default=None,
    help="With --kg: the template set whose phrasings are asked ('paper' for the papers' "
    "exact texts, a domain or a .toml file; default the KG domain's natural set).",
)
@click.option("--db", type=click.Path(dir_okay=False), default=None, help="Session database file.")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text")
@click.pass_context
def probe_command(
    ctx: click.Context,
    kg_name: str | None,
    relation: str,
    model_spec: str | None,
    questions: tuple[str, ...],
    session: str | None,
    templates_choice: str | None,
    db: str | None,
    fmt: str,
) -> None:
    """Ask the model about one relation now: every template's phrasing of it and your own
    questions, each alone, printed side by side with what was read from each reply."""
    if (kg_name is None) == (session is None):
        raise InvalidInputError("give --kg KG or --session ID (one of them)")
    if session is not None and templates_choice is not None:
        raise InvalidInputError("--templates goes with --kg: a session asks its own templates")
    if session is not None:
        from kontest_tui.cli.db import open_store
        from kontest_tui.run.probe import probe_context, probe_relation, store_probe_answers

        with open_store(ctx, db, create=False) as store:
            context = probe_context(store, store.sessions.resolve(session), relation)
            phrasings = context.phrasings(questions)
            spec = model_spec or context.model
            answers: list[ProbeAnswer] = asyncio.run(
                probe_relation(
                    spec, context.kg, phrasings, options=context.options, seed=context.seed
                )
            )
            store_probe_answers(store, context, answers)
        kg, found = context.kg, context.relation
    else:
        from kontest_tui.generate.relations import known_relation_types
        from kontest_tui.generate.templates import load_template_set
        from kontest_tui.kg.io import load_graph
        from kontest_tui.run.probe import find_relation, probe_phrasings, probe_relation

        assert kg_name is not None
        kg = load_graph(kg_name)
        template_set = (
            load_template_set(templates_choice, kg.domain)
            if templates_choice
            else known_relation_types(kg)
        )
        found = find_relation(kg, relation, template_set)
        phrasings = probe_phrasings(kg, found, template_set, questions)
        spec = model_spec or "sim"
        answers = asyncio.run(probe_relation(spec, kg, phrasings))
    if not phrasings:
        raise InvalidInputError(
            "nothing to ask: no template has a text for this relation; add --question"
        )
    fact = f"{kg.label(found.parent)} > {kg.label(found.child)}"
    if fmt == "json":
        echo_out(
            json.dumps(
                {
                    "relation": found.id,
                    "fact": fact,
                    "model": spec,
                    "answers": [
                        {
                            "question": a.phrasing.question,
                            "template": a.phrasing.template,
                            "reply": a.raw,
                            "read": a.answer.value,
                            "error": a.error,
                        }
                        for a in answers
                    ],
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return
    echo_out(format_probe_table(fact, spec, answers))


def format_probe_table(fact: str, spec: str, answers: Sequence[ProbeAnswer]) -> str:
    """Each phrasing with its reply side by side: question, where it came from, what was read,
    the reply on one line."""
    header = ("question", "phrasing", "read as", "reply")
    rows = [
        (
            answer.phrasing.question,
            f"template {answer.phrasing.template}" if answer.phrasing.template else "your own",
            answer.answer.value if answer.error is None else "failed",
            " ".join((answer.raw if answer.error is None else answer.error).split()),
        )
        for answer in answers
    ]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(3)]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(
            [*(cell.ljust(width) for cell, width in zip(cells[:3], widths, strict=True)), cells[3]]
        ).rstrip()

    ruler = tuple("-" * width for width in (*widths, len(header[3])))
    return "\n".join([f"{fact}  (model {spec})", "", line(header), line(ruler), *map(line, rows)])
