"""The explanation cards of the built-in kinds' oracles, one module per kind, each a
`card(verdict, evidence, fact)` its kind's words name ("kontest_tui.report.cards.variant:card",
kinds.base.OracleWords.card_builder): report/explain.py imports it when it builds a card of
that oracle. KONTEST's own cards are report/explain.py's."""
