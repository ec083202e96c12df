"""The built-in model providers, one module each (`sim`, `ollama`, `openai`,
`openai-completions`, `replay`, `local`). Each names its spec prefix, parses and prints its
specs, opens its model (importing its client only then) and says what the explorer shows of
it; `models/registry.py` gathers them in one table. `servers.py` is the spec shape the
HTTP ones share (`MODEL@URL`, pools of endpoints)."""
