"""A stored session's gap lists, paged: the relations whose atomic question under a template
was answered, not yes (that template's gap), and those no template answered yes (the
intersection), numbered, from the derived `result_gaps` table (store.rollups writes it;
store.views keeps it built).

`store.gaps` (`GapLists`): `gap_groups` (each group and its size, the report's template
order then the intersection) and `gap_page` (a page of one group, in relation order).
"""

from __future__ import annotations

import json

from .repository import Repository
from .view_records import INTERSECTION, GapRow


class GapLists(Repository):
    """The gap lists of stored sessions, a page at a time."""

    def gap_groups(self, session_id: str) -> list[tuple[str, int]]:
        """(group, size) of each template's gap then the intersection (store.rollups)."""
        sizes = dict(
            self._fetch(
                "SELECT grp, COUNT(*) FROM result_gaps WHERE session = ? GROUP BY grp",
                (session_id,),
            )
        )
        groups = [*self.store.views.templates(session_id), INTERSECTION]
        return [(group, int(sizes.get(group, 0))) for group in groups]

    def gap_page(
        self, session_id: str, group: str, *, offset: int = 0, limit: int = 50
    ) -> list[GapRow]:
        """Relations `offset` .. `offset + limit - 1` of one gap group, in relation order."""
        rows = self._fetch(
            "SELECT g.position, g.relation, r.parent_label, r.child_label, pn.name, cn.name,"
            " cn.way FROM result_gaps g"
            " LEFT JOIN relations r ON r.session = g.session AND r.id = g.relation"
            " LEFT JOIN result_nodes pn ON pn.session = g.session AND pn.node = r.parent"
            " LEFT JOIN result_nodes cn ON cn.session = g.session AND cn.node = r.child"
            " WHERE g.session = ? AND g.grp = ? AND g.position >= ? AND g.position < ?"
            " ORDER BY g.position",
            (session_id, group, max(offset, 0), max(offset, 0) + max(limit, 0)),
        )
        return [
            GapRow(
                index=int(row[0]),
                group=group,
                relation_id=row[1],
                parent_name=row[4] or row[2] or row[1],
                child_name=row[5] or row[3] or "",
                way=tuple(json.loads(row[6])) if row[6] else (),
            )
            for row in rows
        ]
