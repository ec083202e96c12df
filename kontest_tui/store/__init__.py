"""Sessions in SQLite: the schema with its migrations, the `Store` opening it, and its repositories."""

from kontest_tui.store.database import Store
from kontest_tui.store.schema import SCHEMA_VERSION
from kontest_tui.store.sessions import new_session_id
from kontest_tui.store.text import redact_spec

__all__ = ["SCHEMA_VERSION", "Store", "new_session_id", "redact_spec"]
