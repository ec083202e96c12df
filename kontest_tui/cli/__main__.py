"""`python -m kontest_tui.cli` runs the `kontest` command."""

from kontest_tui.cli import main

main()
