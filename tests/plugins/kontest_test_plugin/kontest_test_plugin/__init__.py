"""A kontest plugin for the tests: a model provider (`models.py`) and a test kind
(`kinds.py`), added through the `kontest.models` and `kontest.kinds` entry-point groups
declared in this package's pyproject.toml."""
