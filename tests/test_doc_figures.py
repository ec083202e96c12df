"""The docs quote what the commands beside their figures print (scripts/doc_figures.py).

The quick checks run here (the HalluVault rate of docs/probes.md, the stability count of
docs/sessions-and-runs.md, the ontological tests planned of docs/oracles-and-metrics.md);
`scripts/doc_figures.py` runs them all (whole samples replayed, a benchmark).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "doc_figures.py"


def load_script():  # noqa: ANN201 - the script's module
    spec = importlib.util.spec_from_file_location("doc_figures", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["doc_figures"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


DOC_FIGURES = load_script()


@pytest.mark.parametrize("check", [c for c in DOC_FIGURES.CHECKS if c.fast], ids=lambda c: c.name)
def test_the_doc_quotes_what_the_command_prints(tmp_path: Path, check: object) -> None:
    assert DOC_FIGURES.run_check(check, tmp_path, in_process=True) == []
