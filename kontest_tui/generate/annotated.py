"""Annotated questions (seed 004): BoolQ-style JSONL lines turned into covering-array variants.

Input is JSONL, one `{"question": str, "answer": bool, "passage": str}` per line. Malformed
lines are skipped and returned as problems ("FILE:LINE: reason"), never dropped silently.
Each question becomes covering-array variants (test kind ANNOTATION, relation id "qLINE",
template id "q", expected answer from the annotation); oracles.annotation judges the answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.extras import AnnotationExtras, VariantExtras
from kontest_tui.domain.records import Answer, Conversation, TestKind
from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.covering import DEFAULT_EFFORT
from kontest_tui.generate.ipm import DEFAULT_MAX_VALUES, DEFAULT_SENSES, ipm_for_text
from kontest_tui.generate.synonyms import load_synonym_lists
from kontest_tui.generate.variants import JSON_BOOLEAN_PROMPT, variants_for_ipm
from kontest_tui.validate_input import loads_json, read_input_text

DEFAULT_PROMPT = "Be concise as possible. Answer with a yes or no response."


@dataclass(frozen=True, slots=True)
class AnnotatedQuestion:
    """One annotated question and the line it came from."""

    line: int
    question: str
    answer: bool
    passage: str = ""

    @property
    def id(self) -> str:
        return f"q{self.line}"


def parse_annotation_lines(
    lines: Iterable[str], source: str = "<questions>"
) -> tuple[list[AnnotatedQuestion], list[str]]:
    """Parse JSONL lines; returns the good questions and one problem string per bad line."""
    questions: list[AnnotatedQuestion] = []
    problems: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            item = loads_json(line, where)
        except InvalidInputError as error:
            problems.append(str(error))
            continue
        if not isinstance(item, dict):
            problems.append(f"{where}: expected an object")
            continue
        question, answer, passage = (
            item.get("question"),
            item.get("answer"),
            item.get("passage", ""),
        )
        if isinstance(question, str):  # asked of a model: no escapes, bidi or zero-width
            question = " ".join(clean_text(question).split())
        if not isinstance(question, str) or not question:
            problems.append(f'{where}: "question" must be a non-empty string')
        elif not isinstance(answer, bool):
            problems.append(f'{where}: "answer" must be true or false')
        elif not isinstance(passage, str):
            problems.append(f'{where}: "passage" must be a string')
        else:
            questions.append(AnnotatedQuestion(number, question, answer, clean_text(passage)))
    return questions, problems


def load_annotations(path: str | Path) -> tuple[list[AnnotatedQuestion], list[str]]:
    """Read a questions JSONL file (InvalidInputError if it cannot be read at all)."""
    path = Path(path)
    text = read_input_text(path)
    return parse_annotation_lines(text.splitlines(), str(path))


def build_annotation_conversations(
    path: str | Path,
    *,
    strength: int = 2,
    seed: int = 0,
    limit: int | None = None,
    postfix: bool = False,
    max_values: int = DEFAULT_MAX_VALUES,
    senses: int = DEFAULT_SENSES,
    domain: str = "annotation",
    system_prompt: str | None = None,
    effort: int = DEFAULT_EFFORT,
) -> tuple[list[Conversation], list[str]]:
    """Variant conversations for every good line of a questions file, and the problems found.

    Raises InvalidInputError when the file is unreadable or holds no usable question.
    """
    questions, problems = load_annotations(path)
    if not questions:
        detail = f" ({problems[0]})" if problems else ""
        raise InvalidInputError(f"{path}: no usable questions{detail}")
    lists = load_synonym_lists(domain)
    prompt = system_prompt or (JSON_BOOLEAN_PROMPT if postfix else DEFAULT_PROMPT)
    conversations: list[Conversation] = []
    for item in questions:
        ipm = ipm_for_text(
            item.question, item.id, domain, max_values=max_values, senses=senses, lists=lists
        )
        expected = Answer.YES if item.answer else Answer.NO
        for conversation in variants_for_ipm(
            ipm,
            strength=strength,
            seed=seed,
            limit=limit,
            postfix=postfix,
            system_prompt=prompt,
            test_kind=TestKind.ANNOTATION,
            expected=expected,
            effort=effort,
        ):
            variant = conversation.extras
            assert isinstance(variant, VariantExtras)
            extras = AnnotationExtras(
                **variant.variant_fields(),
                question=item.question,
                annotation=item.answer,
                passage=item.passage,
                line=item.line,
            )
            conversations.append(replace(conversation, extras=extras))
    return conversations, problems
