"""What the curation screens (template and synonym editors) read of a stored session: its
model, domain, template set and ids, its KG snapshot (labels, aliases) and its first
relations, without its conversations, answers or an evaluation, so opening an editor on a
100,000-relation session reads a KG and a few rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from kontest_tui.domain.records import Relation
from kontest_tui.errors import InvalidInputError
from kontest_tui.generate.templates import TemplateSet
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.results.evaluate import session_graph
from kontest_tui.store.database import Store
from kontest_tui.store.records import template_set_from_dict

PREVIEW_RELATIONS = 12  # relations of each type a template is previewed on
SCAN_LIMIT = 5_000  # relations read at most to find them (a type rarer than that may miss)


@dataclass(frozen=True, slots=True)
class SessionTemplates:
    """A stored session as the template and synonym editors see it."""

    id: str
    model: str
    kg: KnowledgeGraph  # the session's KG snapshot (labels, aliases of entity slots)
    template_set: TemplateSet | None  # None when the stored snapshot cannot be read
    template_ids: tuple[str, ...]  # the templates the session asked, in order
    relations: tuple[Relation, ...]  # its first relations (distinct pairs), in order

    @property
    def kg_title(self) -> str:
        """The KG's name as the explorer shows it."""
        return self.kg.name or "its KG"

    @property
    def domain(self) -> str:
        """The domain whose template set and synonyms the editors change."""
        if self.template_set is not None:
            return self.template_set.domain
        return self.kg.domain

    def relations_of(self, relation_type: str) -> tuple[Relation, ...]:
        """The first relations of one relation type."""
        return tuple(r for r in self.relations if r.type == relation_type)


def read_session_templates(
    store: Store, session_id: str, preview: int = PREVIEW_RELATIONS
) -> SessionTemplates:
    """The session's templates, KG snapshot and first `preview` distinct relation pairs of
    each relation type (no conversation, answer or evaluation is read)."""
    row = store.sessions.get(session_id)
    template_set: TemplateSet | None
    try:
        template_set = template_set_from_dict(row["templates_json"], f"session {session_id}")
    except InvalidInputError:
        template_set = None
    per_type: dict[str, int] = {}
    pairs: dict[tuple[str, str], Relation] = {}
    types = template_set.relation_types if template_set is not None else ()
    for scanned, relation in enumerate(store.relations.iterate(session_id)):
        if scanned >= SCAN_LIMIT:
            break
        if (relation.parent, relation.child) in pairs or per_type.get(relation.type, 0) >= preview:
            continue
        pairs[relation.parent, relation.child] = relation
        per_type[relation.type] = per_type.get(relation.type, 0) + 1
        if len(per_type) >= max(1, len(types)) and min(per_type.values()) >= preview:
            break
    return SessionTemplates(
        id=session_id,
        model=row["model"] or "",
        kg=session_graph(store, session_id),
        template_set=template_set,
        template_ids=tuple(row["template_ids"] or ()),
        relations=tuple(pairs.values()),
    )
