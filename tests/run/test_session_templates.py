"""What the curation screens read of a stored session (run.api.read_session_templates): its
domain, templates and first relations of each type, read without its answers."""

from __future__ import annotations

from pathlib import Path

from kontest_tui.run.api import read_session_templates
from kontest_tui.store import Store
from tests.support.sessions import store_sessions


def test_a_music_session_gives_its_set_and_first_relations_of_each_type(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    (session_id,) = store_sessions(db, [("sim:careful", None)], "music")
    with Store(db) as store:
        read = read_session_templates(store, session_id, preview=4)
        relations = store.relations.load(session_id)
    assert read.id == session_id and read.model == "sim:careful" and read.domain == "music"
    assert read.template_ids == ("t1", "t2")
    assert read.template_set is not None and read.template_set.domain == "music"
    types = read.template_set.relation_types
    assert len(types) == 3
    # Each type's first four relations, in the session's order (distinct pairs).
    for kind in types:
        expected = [r for r in relations if r.type == kind][:4]
        assert list(read.relations_of(kind)) == expected
    assert len(read.relations) == 12
    assert read.kg.label(read.relations[0].parent)  # the KG snapshot names them
