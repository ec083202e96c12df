"""kontest-tui: knowledge-graph-based consistency testing of language models, in the terminal."""

__version__ = "0.1.0"
