"""What the store's explorer views (store.views) hand out: plain records, one per row shown.

A view row holds exactly what one line of a screen needs (a session of the start screen, a
node of the results tree with its roll-ups, one error, one gap member, one relation's
transcripts), so a screen never holds a whole session.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kontest_tui.domain.records import Answer, Conversation, Relation, Verdict

# The orders of the error list (store.error_list): the clearest first (store.rollups), the
# graph's order, by the relation's name (A to Z), by template (then the clearest first).
CLEAREST = "clearest"
TREE = "tree"
RELATION = "relation"
TEMPLATE = "template"
INTERSECTION = "intersection"  # the gap group of relations no template answered yes


@dataclass(frozen=True, slots=True)
class ErrorFilter:
    """Which errors an error list holds: of one oracle, of tests that asked one template
    (`t1` keeps the verdicts of t1 and of t1+t2 or t2+t1), whose compared answers are all a
    yes or a no (`clear` True) or not (False), on relations with one of `nodes` at either end
    (what a find matched), of one confirmation `status` (oracles.confirmation: "confirmed",
    "mixed", "undecided", "not_reproduced"; "" for errors not asked again), weak or not
    (every compared answer low-margin). Unset: any."""

    oracle: str | None = None
    template: str | None = None
    clear: bool | None = None
    nodes: tuple[str, ...] = ()
    status: str | None = None
    weak: bool | None = None

    @property
    def by_oracle_only(self) -> bool:
        """Nothing but the oracle is chosen: the list is a range of a stored rank."""
        return (
            self.template is None
            and self.clear is None
            and not self.nodes
            and self.status is None
            and self.weak is None
        )


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One row of the start screen: what a session is, from its stored columns."""

    id: str
    model: str
    kg: str
    date: str  # "YYYY-MM-DD HH:MM" (UTC), when it was created
    status: str
    error_rate: float | None  # KONTEST errors per valid test, stored with the last report
    kinds: tuple[str, ...] = ("kontest",)  # the test kinds it asked
    relations: int = 0
    # Its headline rate (oracles.measures.headline_of), stored with the last report: what
    # the rate is (the name of the kind whose headline it is; "" before any report) and the
    # rate.
    headline_measure: str = ""
    headline_rate: float | None = None


@dataclass(frozen=True, slots=True)
class SessionHeader:
    """What the results screen names a session by (its stored columns, not its records)."""

    id: str
    model: str
    kg_name: str  # the KG's source as the session names it (a sample, a file)
    kg_title: str  # the name inside the KG snapshot
    template_ids: tuple[str, ...]
    kinds: tuple[str, ...]
    relations: int
    status: str
    template_texts: Mapping[str, str] = field(default_factory=dict)  # template id -> its text

    @property
    def kg_names(self) -> tuple[str, ...]:
        """The names a stored session on this KG has (report.compare matches on them)."""
        return tuple(dict.fromkeys(name for name in (self.kg_name, self.kg_title) if name))


@dataclass(frozen=True, slots=True)
class Rollup:
    """Counts over a set of relations: how many, their error verdicts by oracle, and their
    atomic answers per template (template -> answer value -> count)."""

    relations: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    answers: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def error_total(self) -> int:
        return sum(self.errors.values())


@dataclass(frozen=True, slots=True)
class TreeNode:
    """A KG node as a child in the results tree, with the direct relation from the parent it
    is shown under and its roll-ups (`own`: relations ending at it; `subtree`: those ending
    at it or below it; a node under two parents counts under both)."""

    node: str
    parent: str  # "" for a root
    name: str  # the label told apart from equal labels (kg.names.NodeNames.name)
    label: str  # the cleaned label alone
    children: int  # its children in the KG
    relation: str | None  # the relation parent -> node, when the session asked it
    answers: dict[str, Answer | None]  # that relation's atomic answer per template
    own: Rollup
    subtree: Rollup

    @property
    def errors_below(self) -> int:
        """Errors on relations into the nodes under it (`▸N` while collapsed)."""
        return self.subtree.error_total - self.own.error_total


@dataclass(frozen=True, slots=True)
class ErrorRow:
    """One error verdict at `index` of an error list (its order and filter), with the names
    of its relation's nodes and, for an ontological error, of its yes-path."""

    index: int
    verdict_id: int
    verdict: Verdict
    relation: Relation | None  # None when the relation row is gone
    parent_name: str
    child_name: str
    path_names: tuple[str, ...] = ()  # the yes-path of an ontological error, by name
    way: tuple[str, ...] = ()  # node ids from a root down to the relation's child
    status: str = ""  # asking it again: oracles.confirmation's status ("": not asked again)
    # how sure the model was of the answers compared (domain.margins): "weak" (each
    # low-margin), "sure" (margins known, not weak) or "" (no margin known)
    margin: str = ""


@dataclass(frozen=True, slots=True)
class GapRow:
    """One relation in a gap group (a template's gap, or the intersection)."""

    index: int
    group: str
    relation_id: str
    parent_name: str
    child_name: str
    way: tuple[str, ...] = ()  # node ids from a root down to the relation's child


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """One asked question with the raw reply and its parsed answer (None: not answered)."""

    question: str
    raw: str | None
    answer: Answer | None
    error: str | None = None  # why the turn failed, when it did
    p_yes: float | None = None  # its margin, P(yes | yes or no) (domain.margins)
    stopped: str | None = None  # "length" / "timeout": the answer was cut


@dataclass(frozen=True, slots=True)
class ConversationRecord:
    """One conversation about a relation, turn by turn."""

    conversation: Conversation
    turns: tuple[TurnRecord, ...]


@dataclass(frozen=True, slots=True)
class RelationDetail:
    """One relation read on demand: its atomic answers, error verdicts and transcripts."""

    relation: Relation
    parent_name: str
    child_name: str
    answers: dict[str, Answer | None]
    errors: tuple[Verdict, ...]
    conversations: tuple[ConversationRecord, ...]
    path_names: tuple[str, ...] = ()  # the relation's KG path, by name
    error_ids: tuple[int, ...] = ()  # the verdict ids of `errors`
    # per error, the yes-path of an ontological one by name (() for the other verdicts)
    error_paths: tuple[tuple[str, ...], ...] = ()

    @property
    def name(self) -> str:
        """`Ireland ⊃ Kinawley`."""
        return f"{self.parent_name} ⊃ {self.child_name}"
