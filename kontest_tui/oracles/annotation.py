"""Annotation oracle: what the model said to annotated questions and their variants.

The questions and their covering-array variants are built by generate.annotated (test kind
ANNOTATION, relation id "qLINE", expected answer from the annotation). Every valid answer is
checked against the annotation (oracle "annotation") and against the other variants (oracle
"variant").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kontest_tui.domain.records import Answer, AnswerKey, Conversation, TestKind, Verdict
from kontest_tui.oracles.conversation_index import get_answer
from kontest_tui.oracles.variant import changed_words, describe_changes, find_variant_verdicts


def find_annotation_verdicts(
    conversations: Iterable[Conversation], answers: Mapping[AnswerKey, Answer | str]
) -> list[Verdict]:
    """One verdict per answered annotated variant: does its class match the annotation?

    The thesis (seed 004, Sec. 1.3.4, "Testorakel und Auswertung") sorts every reply into
    true, false or undefined and fails the test case unless the class equals the annotation,
    so an undefined (unparsable, refused) answer is a failed test, not a skipped one."""
    verdicts = []
    for conversation in conversations:
        if conversation.test_kind is not TestKind.ANNOTATION or not conversation.expected:
            continue
        expected = conversation.expected[0]
        answer = get_answer(answers, (conversation.id, 0))
        if expected is None or answer is None:
            continue
        verdicts.append(
            Verdict(
                oracle="annotation",
                relation_id=conversation.relation_id,
                template_id=conversation.turns[0].template_id,
                error=answer is not expected,
                refs=((conversation.id, 0),),
                answers=(answer,),
                detail=(
                    f"{describe_changes(changed_words(conversation))}: "
                    f"expected {expected.value}, got {answer.value}"
                ),
            )
        )
    return verdicts


@dataclass
class AnnotationEvaluation:
    """Verdicts of both oracles over annotated questions, and the counts a report shows."""

    verdicts: list[Verdict]
    questions: int
    executions: int
    valid: int
    invalid: int
    problems: list[str] = field(default_factory=list)

    def count(self, oracle: str, errors: bool = False) -> int:
        return sum(1 for v in self.verdicts if v.oracle == oracle and (v.error or not errors))

    def to_json(self) -> dict[str, object]:
        tests = {name: self.count(name) for name in ("annotation", "variant")}
        errors = {name: self.count(name, errors=True) for name in ("annotation", "variant")}
        correct = tests["annotation"] - errors["annotation"]
        wrong_questions = sorted(
            {v.relation_id for v in self.verdicts if v.oracle == "annotation" and v.error}
        )
        return {
            "questions": self.questions,
            "executions": self.executions,
            "valid": self.valid,
            "invalid": self.invalid,
            "tests": tests,
            # Accuracy (annotation) and agreement between variants (variant) are not added up.
            "errors": errors,
            "correct": correct,
            # An undefined answer counts as failed (seed 004, Sec. 1.3.4): 8 true and 1
            # unparsable reply to a true question give 8/9.
            "accuracy": correct / tests["annotation"] if tests["annotation"] else None,
            "questions_with_errors": wrong_questions,
            "problems": list(self.problems),
        }


def evaluate_annotations(
    conversations: Iterable[Conversation],
    answers: Mapping[AnswerKey, Answer | str],
    problems: Iterable[str] = (),
) -> AnnotationEvaluation:
    """Both oracles over the ANNOTATION conversations of a run."""
    annotated = [c for c in conversations if c.test_kind is TestKind.ANNOTATION]
    verdicts = find_annotation_verdicts(annotated, answers) + find_variant_verdicts(
        annotated, answers
    )
    executed = [get_answer(answers, (c.id, 0)) for c in annotated]
    executed = [a for a in executed if a is not None]
    valid = sum(1 for a in executed if a in (Answer.YES, Answer.NO))
    return AnnotationEvaluation(
        verdicts=verdicts,
        questions=len({c.relation_id for c in annotated}),
        executions=len(executed),
        valid=valid,
        invalid=len(executed) - valid,
        problems=list(problems),
    )
