"""Test kinds (KONTEST, covering-array variants, FactChecker, logic rules, annotated questions):
what each builds from a KG, how its replies are read, which oracle judges them, and the
evaluation of a whole session over all of them."""
