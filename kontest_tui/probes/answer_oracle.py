"""HalluVault's answer oracle (seed 002, Sec. 4.4, Algorithm 3): why a logic answer is wrong.

The logic prompt asks the model to list the knowledge it used, point by point (the paper's
Table 2). For a wrong answer, that reasoning is turned into a semantic structure and compared
with the ground truth's, built from the rule's *knowledge points* (the KG facts the derived
fact rests on: the links of its path):

- nodes: the entities named. The ground truth's are the knowledge points' entities; the
  reasoning's are the names it holds (quoted titles and capitalised names), a name being one
  of the ground truth's entities when it matches its label or an alias;
- edges: the relations stated, one per sentence that names an entity: the knowledge point's
  relation when the sentence holds one of its words (the probe file's `words`: "located in",
  "part of", ...; the longest word decides between relation types), else another relation;
  negated when the sentence holds a negation. Two edges are the same when their relations are
  (the paper: "identical or represented by synonymous words").

MO_N (node oracle) fires when the Jaccard similarity of the two node sets is below θ_N, MO_E
(edge oracle) when the Jaccard similarity of the edge sets is below θ_E. θ_N = θ_E = 0.8, the
paper's threshold (Sec. 5.1, set on 270 sampled responses for 100% precision). The paper
extracts triples with Stanford OpenIE and compares names with SentenceBERT at cosine 0.8; this
offline oracle compares names with rapidfuzz's normalised ratio at the same 0.8 (80/100), on
case- and accent-folded text.

An error is then, as in Algorithm 3 lines 14-19: **both** (MO_N and MO_E), **inference** (MO_E
only: the right entities, a wrong relation), **knowledge** (MO_N only: entities that are not
the knowledge points'), and also **inference** when neither fires (the reasoning states the
knowledge points, yet the answer contradicts them: the inference failed); **unstated** when
the answer gives no reasoning to compare.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from rapidfuzz import fuzz

from kontest_tui.domain.extras import KnowledgePoint
from kontest_tui.kg.aliases import fold_name

T = TypeVar("T")

THETA_NODES = 0.8  # MO_N: node-set Jaccard similarity below this is a hallucination signal
THETA_EDGES = 0.8  # MO_E: edge-set Jaccard similarity below this
NAME_MATCH = 80.0  # rapidfuzz ratio (0-100) from which two names are one node
OTHER = "other"  # the relation of a sentence holding none of the knowledge points' words
CAUSES = ("knowledge", "inference", "both", "unstated")

_QUOTED = re.compile(r"[\"“”]([^\"“”]{1,120})[\"“”]")
_NAME = re.compile(
    r"[A-ZÀ-ÖØ-Þ][\w'’.&-]*(?:\s+(?:(?:of|de|del|da|la|le|du|von|van|y|upon)\s+)?"
    r"[A-ZÀ-ÖØ-Þ0-9][\w'’.&-]*)*"
)
_SENTENCE = re.compile(r"(?:[.;!?]\s+|\n+|\s+\d+[.)]\s+|^\d+[.)]\s+)")
_NEGATION = re.compile(r"\b(?:not|never|no longer|neither|nor|isn't|wasn't|doesn't|didn't)\b|n't\b")
# Words that start a sentence capitalised but name nothing.
_NOT_NAMES = frozenset((
    "yes", "no", "i", "it", "its", "the", "this", "that", "these", "those", "there", "here",
    "however", "although", "also", "because", "so", "therefore", "thus", "a", "an", "as", "he",
    "she", "they", "we", "you", "both", "neither", "knowledge", "answer", "question", "true",
    "false", "point", "points", "reason", "reasoning", "based", "according", "while", "since",
    "if", "but", "and", "or", "my", "our", "their", "his", "her", "which", "who", "what", "when",
    "where",
))  # fmt: skip


@dataclass(frozen=True, slots=True)
class ReasonCheck:
    """The answer oracle's finding for one wrong answer."""

    cause: str  # one of CAUSES
    node_similarity: float
    edge_similarity: float

    def describe(self) -> str:
        """`answer oracle: error-knowledge (nodes 0.50 < 0.8, edges 1.00)`"""
        if self.cause == "unstated":
            return "answer oracle: no reasoning stated"
        nodes = f"nodes {self.node_similarity:.2f}" + (
            f" < {THETA_NODES}" if self.node_similarity < THETA_NODES else ""
        )
        edges = f"edges {self.edge_similarity:.2f}" + (
            f" < {THETA_EDGES}" if self.edge_similarity < THETA_EDGES else ""
        )
        return f"answer oracle: error-{self.cause} ({nodes}, {edges})"


def _jaccard(found: set[T], truth: set[T]) -> float:
    union = found | truth
    return len(found & truth) / len(union) if union else 1.0


def _names(text: str) -> list[str]:
    """The names a text holds: quoted titles, then capitalised names outside the quotes."""
    names = [match.group(1).strip() for match in _QUOTED.finditer(text)]
    rest = _QUOTED.sub(" ", text)
    for match in _NAME.finditer(rest):
        words = match.group(0).strip(" .'’-").split()
        while words and fold_name(words[0]) in _NOT_NAMES:
            words = words[1:]  # "The", "It" at a sentence's start
        if words:
            names.append(" ".join(words))
    return [name for name in names if fold_name(name) and fold_name(name) not in _NOT_NAMES]


def _node_of(name: str, entities: Mapping[str, Sequence[str]]) -> str:
    """The ground-truth entity a name matches (by label or alias), else the name itself."""
    folded = fold_name(name)
    best, score = "", 0.0
    for entity, names in entities.items():
        for candidate in names:
            ratio = fuzz.ratio(folded, fold_name(candidate))
            if ratio > score:
                best, score = entity, ratio
    return best if score >= NAME_MATCH else f"~{folded}"


def _relation_of(sentence: str, words: Mapping[str, Sequence[str]]) -> str:
    """The knowledge points' relation a sentence states (its longest word found), else OTHER."""
    folded = f" {fold_name(sentence)} "
    best, length = OTHER, 0
    for relation, cues in words.items():
        for cue in cues:
            if len(cue) > length and re.search(rf"(?<!\w){re.escape(cue)}(?!\w)", folded):
                best, length = relation, len(cue)
    return best


def check_reason(
    reason: str,
    points: Sequence[KnowledgePoint],
    aliases: Mapping[str, Sequence[str]],
    words: Mapping[str, Sequence[str]],
) -> ReasonCheck:
    """The answer oracle's finding (see the module docstring). `aliases`: entity name ->
    its other names; `words`: relation -> the words naming it."""
    entities = {
        name: [name, *aliases.get(name, ())]
        for point in points
        for name in (point.child, point.parent)
    }
    truth_nodes = set(entities)
    truth_edges = {(point.relation, False) for point in points}
    nodes: set[str] = set()
    edges: set[tuple[str, bool]] = set()
    relevant = {point.relation: words.get(point.relation, ()) for point in points}
    for sentence in _SENTENCE.split(reason):
        named = {_node_of(name, entities) for name in _names(sentence)}
        if not named:
            continue
        nodes |= named
        edges.add((_relation_of(sentence, relevant), bool(_NEGATION.search(fold_name(sentence)))))
    if not nodes:
        return ReasonCheck("unstated", 0.0, 0.0)
    node_similarity = _jaccard(nodes, truth_nodes)
    edge_similarity = _jaccard(edges, truth_edges)
    wrong_nodes, wrong_edges = node_similarity < THETA_NODES, edge_similarity < THETA_EDGES
    if wrong_nodes and wrong_edges:
        cause = "both"
    elif wrong_nodes:
        cause = "knowledge"
    else:
        cause = "inference"
    return ReasonCheck(cause, node_similarity, edge_similarity)
