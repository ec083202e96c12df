"""The typed records that flow through the engine, one per arrow of the dataflow.

KG -> Relation -> Query -> Conversation -> Response (answers) -> Verdict -> metrics.
Everything here is frozen plain data so the CLI, the TUI, the store and tests share it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from kontest_tui.domain.extras import ConversationExtras


class TestKind(StrEnum):
    """The registry of test kinds: every conversation belongs to exactly one."""

    __test__ = False  # not a pytest class

    KONTEST = "kontest"  # paraphrase pairs (atomic + sequential), KONTEST paper
    VARIANT = "variant"  # covering-array variants of a query, KomMKonLLM
    ANNOTATION = "annotation"  # BoolQ-style annotated questions and their variants
    FACTCHECK = "factcheck"  # FactChecker yes-no / multiple choice / WH / multi-hop
    LOGIC = "logic"  # HalluVault negation / symmetric / inverse / transitive / composite


class Answer(StrEnum):
    """A parsed answer. Oracles compare only YES and NO."""

    YES = "yes"
    NO = "no"
    INVALID = "invalid"
    REFUSAL = "refusal"  # "I don't know" where a test kind allows it (logic rules)
    # Cut by the token limit or the timeout before it said anything readable (kinds.registry
    # `read_reply`): never graded right or wrong, counted apart, never asked again.
    CUT = "cut"


@dataclass(frozen=True, slots=True)
class Relation:
    """`parent` contains `child`: an ancestor -> descendant pair on a KG path (Algorithm 1).

    `id` is unique within a session: "PARENT>CHILD" when deduplicated by node ids,
    "pN:PARENT>CHILD" in per-path mode (N = index of the path it came from).
    `path` holds the node ids from parent to child inclusive along that path, so
    `path[1:-1]` are the nodes in between (empty for a direct edge).
    """

    id: str
    parent: str
    child: str
    type: str
    path: tuple[str, ...]

    @property
    def between(self) -> tuple[str, ...]:
        return self.path[1:-1]


@dataclass(frozen=True, slots=True)
class Query:
    """One question: a relation phrased with one template (or a variant of it)."""

    relation_id: str
    template_id: str
    text: str


@dataclass(frozen=True, slots=True)
class Conversation:
    """An ordered list of questions asked in one chat, each turn seeing the earlier ones.

    KONTEST ids: atomic "REL/t1", sequential "REL/t1+t2" (t1 asked first).
    `label` is what a view shows (Q1, Q2, A, B for the paper's pair of templates).
    `expected` holds the known right answer per turn where the test kind has one.
    `extras` carry what a test kind records beyond that (domain.extras: a variant's row,
    a multiple-choice question's options, a logic rule's premises); None for KONTEST.
    """

    id: str
    relation_id: str
    kind: str  # "atomic" | "sequential"
    label: str
    turns: tuple[Query, ...]
    test_kind: str = TestKind.KONTEST  # a TestKind, or a plugin kind's name (kinds.registry)
    expected: tuple[Answer | None, ...] = ()
    system_prompt: str | None = None
    extras: ConversationExtras | None = field(default=None, compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class Response:
    """What the model said to one turn of one conversation, stored as it arrives."""

    conversation_id: str
    turn: int
    raw: str
    answer: Answer
    error: str | None = None
    latency_ms: float = 0.0
    tokens: int = 0
    attempts: int = 1
    cut: int = 0  # characters dropped past domain.answers.MAX_ANSWER_CHARS (0 = kept whole)
    stopped: str | None = None  # why it ended early: "length", "timeout" (None: it did not)
    # P(yes | yes or no) from the first answer token's log-probabilities (domain.margins);
    # None when the server gave none or the question is not a yes/no one
    p_yes: float | None = None


# (conversation id, turn index) -> parsed answer: what every oracle reads.
AnswerKey = tuple[str, int]


@dataclass(frozen=True, slots=True)
class Verdict:
    """One oracle test: which answers it compared and whether they contradict.

    `oracle` is one of: atomic, sequential_intra, sequential_inter, ontological, variant,
    annotation, factcheck, logic. `refs` name the (conversation, turn) answers compared
    so a view can highlight them; `detail` explains (e.g. the indirect path).
    """

    oracle: str
    relation_id: str
    template_id: str | None
    error: bool
    refs: tuple[AnswerKey, ...]
    answers: tuple[Answer, ...]
    detail: str = ""
