"""One node's or one relation's detail in a stored session: its atomic answers, its error
verdicts and its conversations turn by turn, read on demand by key from the session's own
tables (relations, conversations, responses, verdicts), the names from the results tree.

`store.details` (`RelationDetails`): `relations_into` (every relation ending at a node) and
`relation_detail` (one relation), each a `store.view_records.RelationDetail`.
"""

from __future__ import annotations

from kontest_tui.domain.records import Answer, TestKind
from kontest_tui.oracles.ontological import error_path

from .records import row_to_conversation, row_to_relation, row_to_verdict, stored_answer
from .repository import Repository
from .view_records import ConversationRecord, RelationDetail, TurnRecord


class RelationDetails(Repository):
    """The detail pane's reads: a relation's answers, errors and transcripts."""

    def relations_into(self, session_id: str, node: str) -> list[RelationDetail]:
        """Every relation ending at `node`, each with its answers, errors and transcripts."""
        ids = [
            row[0]
            for row in self._fetch(
                "SELECT id FROM relations WHERE session = ? AND child = ? ORDER BY position",
                (session_id, node),
            )
        ]
        found = (self.relation_detail(session_id, relation_id) for relation_id in ids)
        return [detail for detail in found if detail is not None]

    def relation_detail(self, session_id: str, relation_id: str) -> RelationDetail | None:
        """One relation's atomic answers, error verdicts and conversations turn by turn."""
        rows = list(
            self._dicts(
                "SELECT pk, id, parent, child, type, path, parent_label, child_label"
                " FROM relations WHERE session = ? AND id = ?",
                (session_id, relation_id),
            )
        )
        if not rows:
            return None
        stored = rows[0]
        relation = row_to_relation(stored)
        tree = self.store.tree
        names = tree.node_names(session_id, relation.path or (relation.parent, relation.child))
        conversations, atomic = self._conversations(int(stored["pk"]))
        found = list(
            self._dicts(
                "SELECT * FROM verdicts WHERE relation_key = ? AND error = 1 ORDER BY id",
                (stored["pk"],),
            )
        )
        errors = tuple(row_to_verdict(row) for row in found)
        paths = [error_path(verdict) for verdict in errors]
        path_names = tree.node_names(session_id, (node for path in paths for node in path))
        return RelationDetail(
            relation=relation,
            parent_name=names.get(relation.parent, stored["parent_label"]),
            child_name=names.get(relation.child, stored["child_label"]),
            answers=atomic,
            errors=errors,
            conversations=conversations,
            path_names=tuple(names.get(node, node) for node in relation.path),
            error_ids=tuple(int(row["id"]) for row in found),
            error_paths=tuple(tuple(path_names.get(node, node) for node in path) for path in paths),
        )

    def _conversations(
        self, relation_key: int
    ) -> tuple[tuple[ConversationRecord, ...], dict[str, Answer | None]]:
        """A relation's conversations turn by turn, and its atomic answers by template."""
        conversations: list[ConversationRecord] = []
        atomic: dict[str, Answer | None] = {}
        for row in list(
            self._dicts(
                "SELECT * FROM conversations WHERE relation_key = ? ORDER BY position",
                (relation_key,),
            )
        ):
            conversation = row_to_conversation(row)
            answered = {
                turn: (raw, answer, error, p_yes, stopped)
                for turn, raw, answer, error, p_yes, stopped in self._fetch(
                    "SELECT turn, raw, answer, error, p_yes, stopped FROM responses"
                    " WHERE conversation_key = ?",
                    (row["pk"],),
                )
            }
            turns = []
            for index, query in enumerate(conversation.turns):
                raw, answer, error, p_yes, stopped = answered.get(
                    index, (None, None, None, None, None)
                )
                turns.append(
                    TurnRecord(
                        query.text,
                        raw,
                        stored_answer(answer) if error is None else None,
                        error,
                        p_yes,
                        stopped,
                    )
                )
            conversations.append(ConversationRecord(conversation, tuple(turns)))
            if (
                conversation.kind == "atomic"
                and conversation.test_kind == TestKind.KONTEST
                and conversation.turns
            ):
                atomic.setdefault(conversation.turns[0].template_id, turns[0].answer)
        return tuple(conversations), atomic
