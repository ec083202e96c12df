"""How the explorer names KG nodes and relations: the engine's `kg.names.NodeNames`
(the explanation cards and exports name nodes the same way)."""

from __future__ import annotations

from kontest_tui.kg.names import NodeNames

__all__ = ["NodeNames"]
