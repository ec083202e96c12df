"""Other ways to probe one knowledge graph: FactChecker questions and HalluVault logic rules.

Both turn KG relations into conversations with a known expected answer (`Conversation.expected`
and `Conversation.extras`), so the executor, store and reports treat them like KONTEST pairs.
"""
