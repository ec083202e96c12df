"""A kontest plugin for the tests: a model provider (`models.py`), added through the
`kontest.models` entry-point group declared in this package's pyproject.toml."""
