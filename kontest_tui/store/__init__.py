"""Sessions in SQLite: the schema with its migrations and the `Store` reading and writing it."""

from kontest_tui.store.database import Store, new_session_id, redact_spec
from kontest_tui.store.schema import SCHEMA_VERSION

__all__ = ["SCHEMA_VERSION", "Store", "new_session_id", "redact_spec"]
