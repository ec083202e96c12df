"""Variant oracle: all valid answers to the covering-array variants of one query should agree.

Variants of a query are the VARIANT (or ANNOTATION) conversations sharing a relation id and
template id; row 0 (`VariantExtras.variant` 0) is the original question. Each other variant with a
valid answer is one test against the reference answer (the original's when valid, else the
most common valid answer). Each error says which words were changed, and `find_flip_causes`
ranks the (word, value) choices by how often they come with a flipped answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kontest_tui.domain.extras import VariantExtras
from kontest_tui.domain.records import Answer, AnswerKey, Conversation, TestKind, Verdict
from kontest_tui.oracles.conversation_index import get_valid_answer

VARIANT_KINDS = (TestKind.VARIANT, TestKind.ANNOTATION)


@dataclass(frozen=True, slots=True)
class FlipCause:
    """One replaced value and how often the answer flipped when it was used."""

    parameter: str
    value: str
    flips: int
    uses: int

    @property
    def rate(self) -> float:
        return self.flips / self.uses if self.uses else 0.0


@dataclass(frozen=True, slots=True)
class VariantGroup:
    """The variants of one query with their valid answers and the reference they are held to."""

    relation_id: str
    template_id: str
    conversations: tuple[Conversation, ...]  # row order, row 0 first when present
    answers: tuple[Answer | None, ...]  # valid answer per conversation, None if not comparable
    reference: Answer | None
    reference_id: str | None


def group_variants(
    conversations: Iterable[Conversation], answers: Mapping[AnswerKey, Answer | str]
) -> list[VariantGroup]:
    """Variant conversations grouped per (relation, template), in first-seen order."""
    groups: dict[tuple[str, str], list[Conversation]] = {}
    for conversation in conversations:
        if conversation.test_kind not in VARIANT_KINDS or not conversation.turns:
            continue
        key = (conversation.relation_id, conversation.turns[0].template_id)
        groups.setdefault(key, []).append(conversation)
    out = []
    for (relation_id, template_id), members in groups.items():
        members.sort(key=variant_row)
        valid = tuple(get_valid_answer(answers, (c.id, 0)) for c in members)
        reference, reference_id = None, None
        if members and variant_row(members[0]) == 0 and valid[0] is not None:
            reference, reference_id = valid[0], members[0].id
        else:
            counts = Counter(a for a in valid if a is not None)
            if counts:
                # Most common valid answer; ties go to the answer seen first.
                best = max(counts.values())
                reference = next(a for a in valid if a is not None and counts[a] == best)
                reference_id = next(
                    c.id for c, a in zip(members, valid, strict=True) if a is reference
                )
        out.append(
            VariantGroup(relation_id, template_id, tuple(members), valid, reference, reference_id)
        )
    return out


def variant_row(conversation: Conversation) -> int:
    """A variant's row of its covering array (0: the original question; a conversation
    without a row sorts last)."""
    extras = conversation.extras
    return extras.variant if isinstance(extras, VariantExtras) else 1 << 30


def changed_words(conversation: Conversation) -> Mapping[str, str]:
    """The words a variant changed: parameter name -> the word put in (empty for others)."""
    extras = conversation.extras
    return extras.changed if isinstance(extras, VariantExtras) else {}


def describe_changes(changed: Mapping[str, str]) -> str:
    """ "have -> contain, Ireland -> Éire" from a {parameter name: value} mapping."""
    if not changed:
        return "original wording"
    return ", ".join(f"{name.split(':', 1)[-1]} -> {value}" for name, value in changed.items())


FLIPS_MARK = "; always flips with "  # in a variant verdict's detail, before its flip causes


def verdict_changes(verdict: Verdict) -> str:
    """The words a variant verdict's variant changed, from its detail: "have → include,
    Ireland → Éire" ("" for the original wording or another oracle's verdict)."""
    if verdict.oracle != "variant":
        return ""
    head = verdict.detail.split(FLIPS_MARK, 1)[0]
    if ": " not in head:
        return ""
    changes = head.rsplit(": ", 1)[0]
    return "" if changes == describe_changes({}) else changes.replace(" -> ", " → ")


def find_flip_causes(group: VariantGroup) -> list[FlipCause]:
    """Replaced values ranked by flip rate (then flips): which word choice flips the answer."""
    flips: Counter[tuple[str, str]] = Counter()
    uses: Counter[tuple[str, str]] = Counter()
    for conversation, answer in zip(group.conversations, group.answers, strict=True):
        if answer is None or group.reference is None or conversation.id == group.reference_id:
            continue
        for item in changed_words(conversation).items():
            uses[item] += 1
            if answer is not group.reference:
                flips[item] += 1
    causes = [FlipCause(p, v, flips[(p, v)], n) for (p, v), n in uses.items()]
    causes.sort(key=lambda c: (-c.rate, -c.flips, c.parameter, c.value))
    return causes


def find_variant_verdicts(
    conversations: Iterable[Conversation], answers: Mapping[AnswerKey, Answer | str]
) -> list[Verdict]:
    """One verdict per variant with a valid answer, compared with its query's reference answer."""
    verdicts: list[Verdict] = []
    for group in group_variants(conversations, answers):
        if group.reference is None:
            continue
        suspects = [c for c in find_flip_causes(group) if c.flips and c.rate == 1.0]
        for conversation, answer in zip(group.conversations, group.answers, strict=True):
            if answer is None or conversation.id == group.reference_id:
                continue
            error = answer is not group.reference
            changed = changed_words(conversation)
            detail = f"{describe_changes(changed)}: {group.reference.value} -> {answer.value}"
            if error:
                own = [c for c in suspects if changed.get(c.parameter) == c.value]
                if own:
                    detail += FLIPS_MARK + ", ".join(
                        f"{c.parameter.split(':', 1)[-1]} -> {c.value} ({c.flips}/{c.uses})"
                        for c in own
                    )
            verdicts.append(
                Verdict(
                    oracle="variant",
                    relation_id=group.relation_id,
                    template_id=group.template_id,
                    error=error,
                    refs=((group.reference_id or "", 0), (conversation.id, 0)),
                    answers=(group.reference, answer),
                    detail=detail,
                )
            )
    return verdicts


def summarize_variants(
    conversations: Iterable[Conversation],
    answers: Mapping[AnswerKey, Answer | str],
    *,
    top: int = 20,
) -> tuple[list[Verdict], dict[str, object]]:
    """The variant verdicts of a session's VARIANT conversations and its report section.

    The section counts queries varied, variants asked, tests and errors, and lists the
    (word, value) choices that flipped answers most often over all queries (`top` of them).
    """
    variants = [c for c in conversations if c.test_kind is TestKind.VARIANT]
    groups = group_variants(variants, answers)
    verdicts = find_variant_verdicts(variants, answers)
    flips: Counter[tuple[str, str]] = Counter()
    uses: Counter[tuple[str, str]] = Counter()
    for group in groups:
        for cause in find_flip_causes(group):
            flips[(cause.parameter, cause.value)] += cause.flips
            uses[(cause.parameter, cause.value)] += cause.uses
    ranked = sorted(
        (key for key in uses if flips[key]), key=lambda k: (-flips[k], -flips[k] / uses[k], k)
    )
    asked = [answers.get((c.id, 0)) for c in variants]
    errors = sum(1 for v in verdicts if v.error)
    section: dict[str, object] = {
        "queries": len(groups),
        "variants": len(variants),
        "executions": sum(1 for a in asked if a is not None),
        "tests": len(verdicts),
        "errors": errors,
        "queries_with_flips": len({(v.relation_id, v.template_id) for v in verdicts if v.error}),
        "flip_causes": [
            {
                "word": parameter.split(":", 1)[-1],
                "value": value,
                "flips": flips[(parameter, value)],
                "uses": uses[(parameter, value)],
            }
            for parameter, value in ranked[:top]
        ],
    }
    return verdicts, section
