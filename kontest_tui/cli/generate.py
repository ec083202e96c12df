"""`kontest generate`: print the conversations a run would ask, as JSONL or readable text.

The command is a thin layer over `generate_conversations(request)`: the KONTEST conversations,
then those of the other test kinds named by `--kind` (or `--variants`), built from the kinds'
registry with their options, whose flags the registry's kinds declare (cli.kinds).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import click

from kontest_tui.cli.kinds import kind_flags, kind_names_help, with_kinds
from kontest_tui.cli.output import echo_out
from kontest_tui.cli.scope_options import entity_option
from kontest_tui.domain.records import Conversation
from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.conversations import build_suite
from kontest_tui.generate.templates import TemplateSet, load_template_set
from kontest_tui.kg.graph import KnowledgeGraph

if TYPE_CHECKING:
    from kontest_tui.generate.check import QuestionCheck


@dataclass
class GenerateRequest:
    """Everything `kontest generate` was asked for, already parsed."""

    kg: KnowledgeGraph
    depth: int | None = None
    per_path: bool = False
    template_set: TemplateSet | None = None  # None: the KG domain's set
    template_ids: tuple[str, ...] | None = None
    extras: dict[str, object] = field(default_factory=dict)  # values of extension options


def parse_template_ids(value: str | None) -> tuple[str, ...] | None:
    """ "t1,t3" -> ("t1", "t3"); None or blank -> None (the first two templates)."""
    if value is None or not value.strip():
        return None
    ids = tuple(part.strip() for part in value.split(","))
    if any(not part for part in ids):
        raise InvalidInputError(f"--template-ids: empty id in {value!r}")
    return ids


def generate_conversations(
    request: GenerateRequest, limit: int | None = None
) -> list[Conversation]:
    """The KONTEST conversations of the request, passed through every registered extension;
    the first `limit` of them when given. Every relation gives at least one conversation and
    they come relation by relation, so the first `limit` relations are enough when no
    extension adds or removes any: only those are made (a 1,000-node chain has 499,500)."""
    if limit is not None:
        suite = build_suite(
            request.kg,
            depth=request.depth,
            per_path=request.per_path,
            template_set=request.template_set,
            template_ids=request.template_ids,
            limit=limit,
        )
        conversations = suite.conversations
        extended = with_kinds(request, suite, conversations)
        if extended is conversations and (
            len(conversations) >= limit or len(suite.relations) < limit
        ):
            return conversations[:limit]
    suite = build_suite(
        request.kg,
        depth=request.depth,
        per_path=request.per_path,
        template_set=request.template_set,
        template_ids=request.template_ids,
    )
    conversations = with_kinds(request, suite, suite.conversations)
    return conversations if limit is None else conversations[:limit]


def conversation_to_dict(conversation: Conversation) -> dict[str, object]:
    """The JSON form of one conversation (one line of `--format jsonl`)."""
    data: dict[str, object] = {
        "id": conversation.id,
        "relation": conversation.relation_id,
        "kind": conversation.kind,
        "label": conversation.label,
        "test_kind": str(conversation.test_kind),
        "turns": [
            {"template": query.template_id, "text": query.text} for query in conversation.turns
        ],
    }
    if conversation.expected:
        data["expected"] = [str(answer) if answer else None for answer in conversation.expected]
    if conversation.extras:
        data["meta"] = conversation.extras.to_json()
    return data


def format_conversation_text(conversation: Conversation) -> str:
    """A readable block: the conversation in words (report.words: "asked alone", "one
    conversation", "variant 3") and its id, then one numbered line per turn."""
    from kontest_tui.report.words import conversation_name

    lines = [f"{conversation_name(conversation)} · {conversation.id}"]
    for number, query in enumerate(conversation.turns, start=1):
        lines.append(f"    {number}. [{query.template_id}] {query.text}")
    return "\n".join(lines)


def check_generated(request: GenerateRequest) -> QuestionCheck:
    """The question check (generate.check) over the questions the request generates."""
    from kontest_tui.generate.check import check_questions
    from kontest_tui.generate.relations import iter_relations
    from kontest_tui.generate.templates import resolve_template_set

    template_set = resolve_template_set(request.template_set, request.kg.domain)
    relations = iter_relations(
        request.kg, request.depth, per_path=request.per_path, template_set=template_set
    )
    return check_questions(request.kg, relations, template_set, request.template_ids)


def _count(number: int, word: str) -> str:
    """`1 relation`, `2 relations`."""
    return f"{number:,} {word}{'' if number == 1 else 's'}"


def format_check(check: QuestionCheck, shown: int = 3) -> str:
    """The question check in words: the share flagged, then each reason with its counts and
    its first questions."""
    from kontest_tui.generate.check import REASONS, examples

    lines = [
        f"Question check: {check.template_set} templates {', '.join(check.template_ids)}, "
        f"{_count(check.relations, 'relation')}, {_count(check.questions, 'question')}",
        f"Flagged: {check.flagged_relations:,} of {_count(check.relations, 'relation')} "
        f"({check.share:.1%}), {_count(check.flagged_questions, 'question')}",
    ]
    grouped = check.by_reason()
    for reason, flags in grouped.items():
        name, meaning = REASONS[reason]
        relations = len({flag.relation_id for flag in flags})
        questions = len({(flag.relation_id, flag.template_id) for flag in flags})
        lines.append("")
        counts = f"{_count(questions, 'question')}, {_count(relations, 'relation')}"
        lines.append(f"{name} ({counts}): {meaning}")
        for flag in examples(flags, shown):
            lines.append(f"  {flag.question}  [{flag.detail}]")
    clean = [name for key, (name, _) in REASONS.items() if key not in grouped]
    if clean:
        lines.append("")
        lines.append(f"Nothing flagged: {', '.join(clean)}")
    return "\n".join(lines)


@click.command("generate")
@click.option(
    "--kg", "kg_source", required=True, help="KG file or sample name (places, music, ...)."
)
@click.option("--depth", type=click.IntRange(min=1), default=None, help="Longest path, in edges.")
@entity_option
@click.option("--per-path", is_flag=True, help="Count every pair on every path (paper tables).")
@click.option(
    "--templates",
    "templates_choice",
    default=None,
    help="Template set: 'paper' (the papers' exact texts), 'natural' (the default), a domain "
    "name or a .toml file (default: the KG domain's natural set).",
)
@click.option(
    "--template-ids", default=None, help="Templates to use, e.g. t1,t3 (default: first two)."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "text"]),
    default=None,
    help="jsonl (default) or text; with --check: text (default) or one JSON object.",
)
@click.option(
    "--limit", type=click.IntRange(min=0), default=None, help="Print at most N conversations."
)
@click.option(
    "--check",
    is_flag=True,
    help="Check the questions instead of printing them: what each rule flags, by reason.",
)
def generate_command(
    kg_source: str,
    depth: int | None,
    entities: tuple[str, ...],
    per_path: bool,
    templates_choice: str | None,
    template_ids: str | None,
    fmt: str | None,
    limit: int | None,
    check: bool,
    **extras: object,
) -> None:
    """Print the conversations generated from a knowledge graph (nothing is asked), or with
    --check what the question check flags in them (a report: exit 0)."""
    from kontest_tui.kg.io import load_graph
    from kontest_tui.kg.scope import apply_scope

    kg, depth = apply_scope(load_graph(kg_source), entities, depth)
    request = GenerateRequest(
        kg=kg,
        depth=depth,
        per_path=per_path,
        template_set=load_template_set(templates_choice, kg.domain) if templates_choice else None,
        template_ids=parse_template_ids(template_ids),
        extras=extras,
    )
    if check:
        found = check_generated(request)
        if fmt == "jsonl":
            echo_out(json.dumps(found.to_json(), ensure_ascii=False))
        else:
            echo_out(format_check(found))
        return
    fmt = fmt or "jsonl"
    for conversation in generate_conversations(request, limit):
        if fmt == "jsonl":
            echo_out(json.dumps(conversation_to_dict(conversation), ensure_ascii=False))
        else:
            echo_out(format_conversation_text(conversation))


def register(cli: click.Group) -> None:
    """Attach this module's commands to the main group, with the kinds' flags (cli.kinds)."""
    if not any(param.name == "kinds" for param in generate_command.params):
        generate_command.params.extend(
            [
                click.Option(
                    ["--kind", "kinds"],
                    multiple=True,
                    metavar="KIND[,KIND]",
                    help=f"Test kinds to generate: {kind_names_help()} (repeat or "
                    "comma-separate; default kontest).",
                ),
                click.Option(
                    ["--kind-seed", "--variant-seed", "kind_seed"],
                    type=int,
                    default=0,
                    show_default=True,
                    help="Seed of the kinds: distractors and option order (factcheck), the "
                    "covering arrays (variants).",
                ),
                *kind_flags(),
            ]
        )
    cli.add_command(generate_command)
