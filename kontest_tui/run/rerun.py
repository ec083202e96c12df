"""Ask a stored session again after its templates or synonym lists changed: only what changed.

`rerun_spec(store, id)` is the session's stored spec (run.api.stored_spec: the same KG
snapshot, scope, kinds and their options, chat options and seed) with its templates' texts
as they are now: each template id the session asked takes the text of your copy of the
domain's set (or of a given set) when it has one for every relation type of the session;
covering-array variants are made again from the synonym lists as they are now.

`plan_reuse` says which turns of the new session's conversations are the same questions as
the parent's: a conversation keeps the parent's answers to its first turns, under the same
conversation id, while their texts are the same (a turn after a changed one is asked again:
what it follows changed); a conversation whose text is not the parent's under its own id (a
variant whose sentence moved to another row of a new covering array) takes the answers of a
parent conversation of the same kind asking exactly its turns, unless the session asks
every conversation from scratch (`--fresh-conversations`: no two conversations share an
answer there). A failed or missing answer of the parent is asked again.

The plan counts what the run asks: the turns, and the requests (identical requests share one
model call, run.executor), which are the model calls the run makes when every call answers.
`reuse_answers` stores the reused answers in the new session, marked with their origin.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from kontest_tui.domain.records import Conversation
from kontest_tui.domain.rerun import RerunPlanJSON
from kontest_tui.errors import InvalidInputError, KontestError
from kontest_tui.generate.templates import TemplateSet, template_set_for_domain
from kontest_tui.run.spec import SessionSpec
from kontest_tui.store.database import Store


@dataclass(frozen=True, slots=True)
class RerunPlan:
    """What asking a session again reuses and asks (see the module docstring)."""

    parent: str
    turns: int  # turns of the new session
    reused: int  # answers taken from the parent
    changed: int  # turns asked because their own question is new
    after_changed: int  # turns asked because an earlier turn of their conversation is new
    missing: int  # turns asked because the parent has no answer to them (failed, not asked)
    requests: int  # distinct requests among the turns asked: the model calls to make
    asked_by_kind: dict[str, int]  # turns asked per test kind
    changed_templates: tuple[str, ...]  # template ids whose text is not the parent's
    # (parent conversation, new conversation, first turns reused) for each reuse
    copies: tuple[tuple[str, str, int], ...] = field(default=(), repr=False)
    session: str | None = None  # the new session, once stored

    @property
    def asked(self) -> int:
        """Turns the new session asks."""
        return self.changed + self.after_changed + self.missing

    def to_json(self) -> RerunPlanJSON:
        return RerunPlanJSON(
            parent=self.parent,
            session=self.session,
            turns=self.turns,
            reused=self.reused,
            asked=self.asked,
            changed=self.changed,
            after_changed=self.after_changed,
            missing=self.missing,
            requests=self.requests,
            asked_by_kind=dict(self.asked_by_kind),
            changed_templates=list(self.changed_templates),
        )


def current_templates(
    stored: TemplateSet, now: TemplateSet | None = None
) -> tuple[TemplateSet, tuple[str, ...]]:
    """The session's template set with each template's text as `now` has it (default: the
    domain's set as it is now, your copy when you saved one), and the ids whose texts
    changed. A template `now` lacks, or has without a text for every relation type the
    session's set has, keeps the session's texts."""
    if now is None:
        try:
            now = template_set_for_domain(stored.domain)
        except KontestError:
            return stored, ()
    types = set(stored.relation_types)
    templates = []
    changed = []
    for template in stored.templates:
        if template.id in now.ids:
            fresh = now.get(template.id)
            if types <= set(fresh.texts):
                texts = {kind: fresh.texts[kind] for kind in template.texts if kind in fresh.texts}
                if texts != dict(template.texts):
                    changed.append(template.id)
                template = replace(fresh, texts=texts)
        templates.append(template)
    return replace(stored, templates=tuple(templates)), tuple(changed)


def rerun_spec(
    spec: SessionSpec, template_set: TemplateSet | None = None
) -> tuple[SessionSpec, tuple[str, ...]]:
    """A stored session's spec (run.api.stored_spec) with its templates' texts as they are
    now (`template_set`, else the domain's set), and the template ids whose texts changed."""
    if spec.template_set is None:
        raise InvalidInputError("the session's templates cannot be read: it cannot be asked again")
    stored = spec.template_set
    if not isinstance(stored, TemplateSet):
        raise InvalidInputError("the session's templates cannot be read: it cannot be asked again")
    templates, changed = current_templates(stored, template_set)
    return replace(spec, template_set=templates), changed


def _texts(conversation: Conversation) -> tuple[str, ...]:
    return tuple(query.text for query in conversation.turns)


def _same_prefix(old: Conversation, new: Conversation) -> int:
    """How many first turns two conversations ask alike (same texts, same system prompt)."""
    if old.system_prompt != new.system_prompt or old.test_kind != new.test_kind:
        return 0
    count = 0
    for before, now in zip(old.turns, new.turns, strict=False):
        if before.text != now.text:
            break
        count += 1
    return count


def plan_reuse(
    parent: str,
    old: Sequence[Conversation],
    answered: Mapping[str, int],
    new: Sequence[Conversation],
    *,
    by_text: bool = True,
    share_requests: bool = True,
    changed_templates: Sequence[str] = (),
) -> RerunPlan:
    """The reuse plan of a new session's conversations `new` against the parent's `old`
    (`answered`: parent conversation id -> how many first turns have an answer); `by_text`:
    a conversation may take the answers of a parent conversation with another id asking
    the same turns; `share_requests`: identical requests are asked once (the executor's
    `share_answers`), so `requests` counts distinct ones."""
    by_id = {conversation.id: conversation for conversation in old}
    whole: dict[tuple[object, ...], str] = {}
    if by_text:
        for conversation in old:
            if answered.get(conversation.id, 0) >= len(conversation.turns) > 0:
                key = (conversation.test_kind, conversation.system_prompt, *_texts(conversation))
                whole.setdefault(key, conversation.id)
    copies: list[tuple[str, str, int]] = []
    reused = changed = after_changed = missing = 0
    by_kind: Counter[str] = Counter()
    requests: set[tuple[object, ...]] = set()
    for conversation in new:
        turns = len(conversation.turns)
        before = by_id.get(conversation.id)
        same = _same_prefix(before, conversation) if before is not None else 0
        kept = min(same, answered.get(conversation.id, 0)) if before is not None else 0
        source = conversation.id
        if kept < turns and by_text:
            key = (conversation.test_kind, conversation.system_prompt, *_texts(conversation))
            found = whole.get(key)
            if found is not None:
                source, kept = found, turns
        if kept:
            copies.append((source, conversation.id, kept))
            reused += kept
        for turn in range(kept, turns):
            by_kind[str(conversation.test_kind)] += 1
            if turn >= same:
                if before is None or turn >= len(before.turns) or turn == same:
                    changed += 1
                else:
                    after_changed += 1
            else:
                missing += 1
            request = (conversation.system_prompt, *_texts(conversation)[: turn + 1])
            requests.add(request if share_requests else (conversation.id, turn))
    return RerunPlan(
        parent=parent,
        turns=sum(len(conversation.turns) for conversation in new),
        reused=reused,
        changed=changed,
        after_changed=after_changed,
        missing=missing,
        requests=len(requests),
        asked_by_kind=dict(by_kind),
        changed_templates=tuple(changed_templates),
        copies=tuple(copies),
    )


def reuse_answers(store: Store, plan: RerunPlan, session_id: str) -> RerunPlan:
    """Store the plan's reused answers in the new session `session_id` (marked with the
    parent as their origin); the plan with its session."""
    stored = store.responses.reuse(plan.parent, session_id, plan.copies)
    if stored != plan.reused:  # the parent changed between the plan and now (a run of it)
        raise InvalidInputError(
            f"session {plan.parent} changed while it was asked again: {stored} of "
            f"{plan.reused} answers could be reused; ask again"
        )
    return replace(plan, session=session_id)
