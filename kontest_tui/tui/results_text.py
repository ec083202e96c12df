"""How the results screen words what the store's views hand it: a node's roll-ups, the
relations into it with their verdicts and transcripts, a row of the Errors and Gap tables.
Plain rich Text from records; labels and model text are never read as markup."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.extras import expected_text
from kontest_tui.domain.records import Verdict
from kontest_tui.report.confirmation import status_word
from kontest_tui.report.words import (
    MappedNames,
    conversation_name,
    describe_fact,
    oracle_name,
    verdict_brief,
    verdict_sentence,
    verdict_template,
)
from kontest_tui.store.view_records import ErrorRow, GapRow, RelationDetail, TreeNode
from kontest_tui.tui.views import kind_oracles
from kontest_tui.tui.widgets.paged_table import Row
from kontest_tui.tui.widgets.relation_tree import ANSWER_STYLES, describe_answer

RAW_CHARS = 2000  # how much of one raw answer the detail pane shows


def describe_verdict(verdict: Verdict, path: Sequence[str] = (), fact: str | None = None) -> Text:
    """One error verdict as a line: the test by name and what the model said, in the
    engine's words (report.words); `path`: an ontological error's yes-path by name
    (store.view_records.RelationDetail.error_paths); `fact`: its relation's fact by name."""
    style = {"ontological": "bold red"}.get(
        oracle_name(verdict.oracle),
        "bold yellow" if verdict.oracle in kind_oracles() else "bold magenta",
    )
    text = Text()
    text.append(f"✗ {oracle_name(verdict.oracle)}", style=style)
    sentence = verdict_sentence(verdict, fact=fact, path_names=path)
    text.append(f": {sentence}")
    return text


def fact_of(row: ErrorRow | RelationDetail) -> str | None:
    """The fact of a row's relation by its nodes' names ("Ulster contains Kinawley")."""
    relation = row.relation
    if relation is None:
        return None
    names = {relation.parent: row.parent_name, relation.child: row.child_name}
    return describe_fact(relation, MappedNames(names))


def describe_rollup(row: TreeNode) -> Text:
    """`Ulster and below: 120 relations, 14 errors (implied facts 11, two phrasings alone 3);
    t1 yes 100 no 20`."""
    text = Text()
    sub = row.subtree
    text.append(f"{row.name}", style="bold")
    text.append(f" and below: {sub.relations} relation{'s' if sub.relations != 1 else ''}")
    if sub.errors:
        parts = ", ".join(
            f"{oracle_name(oracle)} {count}" for oracle, count in sorted(sub.errors.items())
        )
        text.append(f", {sub.error_total} error{'s' if sub.error_total != 1 else ''} ({parts})")
    else:
        text.append(", no errors")
    for template_id, counts in sub.answers.items():
        text.append(f"; {template_id} ", style="dim")
        text.append(" ".join(f"{answer} {count}" for answer, count in sorted(counts.items())))
    text.append("\n\n")
    return text


def order_details(details: list[RelationDetail], parent_id: str | None) -> list[RelationDetail]:
    """The relation from the tree parent first, then the others by path length."""
    return sorted(
        details, key=lambda detail: (detail.relation.parent != parent_id, len(detail.relation.path))
    )


def first_question(details: list[RelationDetail]) -> str | None:
    """The first question asked about the first of `details` that has one."""
    for detail in details:
        for record in detail.conversations:
            for turn in record.turns:
                if turn.question:
                    return turn.question
    return None


def render_relation_detail(
    details: list[RelationDetail],
    template_ids: list[str] | tuple[str, ...] = (),
    parent_id: str | None = None,
    current: int | None = None,
    row: TreeNode | None = None,
) -> Text:
    """Every relation into a node: first each one's answers and error verdicts (the one from
    the tree parent on top; `current`, a verdict id, marked ▶), then each conversation's
    turns. `row`: the node's roll-ups, on top."""
    text = describe_rollup(row) if row is not None else Text()
    if not details:
        text.append("A root entity: no relation ends here. Move to a child node.", style="italic")
        return text
    ordered = order_details(details, parent_id)
    for detail in ordered:
        relation = detail.relation
        text.append(detail.name, style="bold")
        text.append(f"  [{relation.type}]  ", style="dim")
        for template_id in template_ids or list(detail.answers):
            word, style = ANSWER_STYLES.get(detail.answers.get(template_id), ANSWER_STYLES[None])
            text.append(f"{template_id}:", style="dim")
            text.append(word + " ", style=style)
        text.append("\n")
        if relation.between:
            text.append("  via " + " > ".join(detail.path_names) + "\n", style="dim")
        if not detail.errors:
            text.append("  no errors\n", style="green")
        paths = detail.error_paths or ((),) * len(detail.errors)
        for verdict_id, verdict, path in zip(detail.error_ids, detail.errors, paths, strict=False):
            text.append("▶ " if verdict_id == current else "  ", style="bold")
            text.append_text(describe_verdict(verdict, path, fact_of(detail)))
            text.append("\n")
    text.append("\nTranscripts\n", style="bold underline")
    for detail in ordered:
        # the relation by its nodes' names, as everywhere else (its id has no spaces to
        # wrap at and says nothing the names do not)
        text.append(detail.name + "\n", style="bold")
        for record in detail.conversations:
            conversation = record.conversation
            text.append(f"  {conversation_name(conversation)}", style="cyan")
            expected = expected_text(conversation.extras)
            if expected is not None and str(conversation.test_kind) != "kontest":
                text.append(f"  expected: {expected}", style="dim")
            text.append("\n")
            for turn in record.turns:
                text.append("    Q: ", style="dim")
                text.append(turn.question + "\n")
                text.append("    A: ", style="dim")
                word, style = describe_answer(conversation, turn.answer)
                if turn.raw is None:
                    text.append("(no answer yet)", style="dim")
                else:
                    text.append(clean_text(turn.raw[:RAW_CHARS]))
                    if len(turn.raw) > RAW_CHARS:
                        text.append(
                            f" … ({len(turn.raw) - RAW_CHARS} more characters)", style="dim"
                        )
                text.append(f"  → {word}\n", style=style)
        text.append("\n")
    return text


def error_cells(row: ErrorRow) -> Row:
    """One error as the Errors tab's row."""
    verdict = row.verdict
    detail = verdict_brief(verdict, path_names=row.path_names)
    return (
        str(row.index + 1),
        oracle_name(verdict.oracle),
        Text(f"{row.parent_name} ⊃ {row.child_name}" if row.child_name else row.parent_name),
        verdict_template(verdict),
        "/".join(answer.value for answer in verdict.answers),
        status_cell(row),
        Text(detail),
    )


def status_cell(row: ErrorRow) -> Text:
    """The Errors tab's Status: the confirmation status when the error was asked again (`r`),
    then `weak` when every answer it compares is low-margin; NOT_ASKED_MARK when it was
    neither asked again nor weak (ERRORS_STATUS_HINT, above the table, says so). Short, so
    Detail stays on an 80-column screen."""
    cell = Text()
    if row.status:
        cell.append(status_word(row.status), style=STATUS_STYLES.get(row.status, ""))
    if row.margin == "weak":
        cell.append(", weak" if row.status else "weak", style="yellow")
    if not cell:
        cell.append(NOT_ASKED_MARK, style="dim")
    return cell


NOT_ASKED_MARK = "–"
# The line above the Errors table saying what its Status column's words mean.
ERRORS_STATUS_HINT = (
    f"Status: {NOT_ASKED_MARK} not asked again yet (r asks: confirmed, mixed, not reproduced "
    "or undecided) · weak: each answer compared was near a coin toss (low margin), likely a "
    "fluke"
)


# How the Errors tab shows a confirmation status.
STATUS_STYLES = {"confirmed": "bold red", "mixed": "yellow", "not_reproduced": "dim"}


def gap_cells(row: GapRow) -> Row:
    return (str(row.index + 1), Text(f"{row.parent_name} ⊃ {row.child_name}"))
