"""OpenAI-compatible servers asked in completions mode
(`openai-completions:MODEL[@BASE_URL]`): /completions with a few-shot prompt, for base models
without a chat template. Everything else is the `openai` provider's (key, URLs, client)."""

from __future__ import annotations

from kontest_tui.models.provider import COMPLETIONS, ProviderHints
from kontest_tui.models.providers import openai

PREFIX = "openai-completions"

PROVIDER = openai.server_provider(
    PREFIX,
    COMPLETIONS,
    ProviderHints(
        title="OpenAI-compatible (completions)",
        description="OpenAI-compatible, completions",
        pattern="openai-completions:MODEL[@BASE_URL]",
        lists_server=True,
    ),
    completions_of=openai.PREFIX,
)
