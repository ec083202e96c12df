"""Helpers shared by several test packages (and the benchmarks): not shipped with kontest."""
