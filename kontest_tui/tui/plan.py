"""What the explorer's screens pass to each other: the plan the wizard builds and the
result the live run and the results screen show (plain dataclasses, no Textual)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kontest_tui.domain.records import Answer, AnswerKey, Conversation, Relation
from kontest_tui.errors import KontestError
from kontest_tui.generate.templates import TemplateSet
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.kinds.registry import KindOptions
from kontest_tui.oracles.evaluate import Evaluation


@dataclass
class SessionPlan:
    """Everything chosen in the wizard: the KG, its relations and conversations, the model."""

    kg: KnowledgeGraph
    kg_source: str
    depth: int | None
    relations: list[Relation]
    conversations: list[Conversation]
    template_set: TemplateSet | None  # None when a stored session's snapshot cannot be read
    template_ids: list[str]
    model_spec: str
    per_path: bool = False
    kinds: tuple[str, ...] = ("kontest",)  # test kinds asked (kinds.registry), registry order
    kind_options: KindOptions | None = None  # the options the kinds were built with
    problems: list[str] = field(default_factory=list)  # lines skipped in a questions file
    resume_id: str | None = None  # a stored session to go on with (only its missing turns)


@dataclass
class SessionResult:
    """A finished (or stopped) session: its plan, the answers so far and the evaluation."""

    plan: SessionPlan
    raw: dict[AnswerKey, str] = field(default_factory=dict)
    answers: dict[AnswerKey, Answer] = field(default_factory=dict)
    evaluation: Evaluation | None = None
    session_id: str | None = None
    # relation id -> its conversations, grouped on first use (views.conversation_views)
    conversations_by_relation: dict[str, list[Conversation]] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def relations(self) -> list[Relation]:
        """The relations asked (what report.compare reads, with `evaluation`)."""
        return self.plan.relations


@dataclass(frozen=True)
class EvaluatedSession:
    """A session with its evaluation (what report.compare.compare_sessions reads)."""

    relations: Sequence[Relation]
    evaluation: Evaluation


def evaluated(result: SessionResult) -> EvaluatedSession:
    """`result` for a comparison; KontestError when it has no evaluation yet."""
    if result.evaluation is None:
        raise KontestError(f"session {result.session_id or '(unsaved)'} has no evaluation yet")
    return EvaluatedSession(result.relations, result.evaluation)
