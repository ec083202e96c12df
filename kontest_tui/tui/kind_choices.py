"""The test kinds the wizard offers and the annotated-questions files it reads, as the
Kinds step shows them (read from kinds.registry; nothing is built here)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kontest_tui.domain.records import Conversation
from kontest_tui.kinds.registry import KINDS, KindOptions, build_annotated_questions


@dataclass(frozen=True)
class KindChoice:
    """One test kind the wizard offers (kinds.registry.KINDS, those built from a KG)."""

    value: str  # TestKind value: kontest | variant | factcheck | logic
    title: str
    description: str
    oracles: tuple[str, ...]


def list_test_kinds() -> list[KindChoice]:
    """The test kinds a session can ask from a KG, in registry order (annotated questions,
    read from a file, are left to `kontest run --questions`)."""
    return [
        KindChoice(kind.value, info.title, info.description, tuple(info.oracles))
        for kind, info in KINDS.items()
        if info.build is not None
    ]


@dataclass(frozen=True)
class AnnotatedQuestions:
    """An annotated-questions file read for a session: its variant conversations and the
    lines skipped (`FILE:LINE: reason`, generate.annotated)."""

    path: str
    conversations: list[Conversation]
    problems: list[str]

    @property
    def questions(self) -> int:
        """How many questions were read (each has relation id `qLINE`)."""
        return len({conversation.relation_id for conversation in self.conversations})


def load_annotated_questions(
    path: str | Path, options: KindOptions | None = None
) -> AnnotatedQuestions:
    """Variant conversations of a questions JSONL file, built with the variant options
    (strength, variant limit, postfix) as `kontest run --questions` does.
    InvalidInputError when the file is unreadable or holds no usable question."""
    conversations, problems = build_annotated_questions(path, options or KindOptions())
    return AnnotatedQuestions(str(path), list(conversations), list(problems))
