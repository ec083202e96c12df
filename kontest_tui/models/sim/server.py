"""`kontest sim serve`: the simulated model over HTTP, speaking the Ollama and OpenAI wire formats.

A small HTTP/1.1 server on stdlib asyncio (keep-alive, chunked streaming), so the real
clients are exercised with no model installed. Routes:

- Ollama: POST /api/chat (NDJSON stream, or one object with "stream": false), GET /api/tags,
  POST /api/show, GET /api/version.
- OpenAI: POST /v1/chat/completions and /v1/completions (SSE `data:` lines ending in
  `data: [DONE]`, or one JSON object), GET /v1/models, GET /v1/models/{id}.

A profile's name (e.g. "flaky", "careful:latest") selects that profile; `sim` (or the server's
own profile's name) the server's profile; any other name is unknown, answered 404 as real
servers answer it (so a typo fails the connection check). Answers come from
`sim.decide_reply`, so they equal the in-process `sim:` model's for the same chat and seed
(the server's `--seed` is the model's; a request's seed draws the sample at temperature > 0,
as the in-process model's). A request asking for log-probabilities (OpenAI chat `logprobs:
true`, completions `logprobs: N`, Ollama `"logprobs": true`) gets the first token's
alternatives, from which the answer's margin reads back (models.logprobs: the chat shape, the
legacy completions shape, Ollama's). Faults are real: 429 with a Retry-After header, 500, a
stream cut mid-answer, a slow first byte; `switches.ServeSwitches` adds the servers met in use
(latency, answers in the reasoning only, the same rejection for every chat, NDJSON to whole
requests).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from kontest_tui.domain.margins import token_word
from kontest_tui.errors import KontestError
from kontest_tui.kg.graph import KnowledgeGraph
from kontest_tui.models.base import Message
from kontest_tui.models.completion_prompt import parse_completion_prompt
from kontest_tui.models.sim.entities import EntityFinder
from kontest_tui.models.sim.http import (
    SERVER_NAME,
    BadRequest,
    HttpRequest,
    Reply,
    encode_json,
    read_request,
)
from kontest_tui.models.sim.model import (
    AttemptCounter,
    TemplatePatterns,
    decide_fault,
    decide_reply,
    split_tokens,
)
from kontest_tui.models.sim.profile import DEFAULT_PROFILE, SimProfile, list_profiles, load_profile
from kontest_tui.models.sim.switches import THINKING_TEXT, ServeSwitches

# The model name that always means the server's own profile (`openai:sim@URL/v1`).
SERVER_MODEL = "sim"


@dataclass(slots=True)
class Turn:
    """What the simulated model does for one request."""

    profile: SimProfile
    pieces: list[str]
    fault: str | None
    delay_s: float
    token_s: float
    thinking: list[str] = field(default_factory=list)  # reasoning pieces sent before the answer
    p_yes: float | None = None  # the answer's margin (None: a hostile reply)
    truncated: bool = False  # the max-tokens limit cut the answer (finish reason "length")

    @property
    def finish(self) -> str:
        """The finish reason: the token limit cut the answer, or the reasoning used it all."""
        return "length" if self.truncated or (self.thinking and not self.pieces) else "stop"

    def alternatives(self) -> list[tuple[str, float]]:
        """The first token's most likely tokens, (token, logprob), most likely first: yes-like
        and no-like tokens in the proportion p_yes (with the token said, if it is another)."""
        if self.p_yes is None:
            return []
        p = min(max(self.p_yes, 1e-6), 1 - 1e-6)
        first = self.pieces[0] if self.pieces else ""
        word = token_word(first)
        yes = first if word in ("yes", "true") else "Yes"  # the token said, on its side
        no = first if word in ("no", "false") else "No"
        found = [(yes, p * 0.95), (no, (1 - p) * 0.95)]
        found += [(" yes" if yes != " yes" else "YES", p * 0.03)]
        found += [(" no" if no != " no" else "NO", (1 - p) * 0.03)]
        if first and first not in {token for token, _ in found}:
            found.append((first, 0.015))  # markup ("**"): neither yes nor no
        found.sort(key=lambda item: -item[1])
        return [(token, round(math.log(prob), 6)) for token, prob in found]

    def chat_logprobs(self) -> dict[str, object]:
        """OpenAI chat's (and llama.cpp's) `logprobs` of the first token."""
        top = self.alternatives()
        first = self.pieces[0] if self.pieces else ""
        chosen = next((lp for token, lp in top if token == first), top[-1][1] if top else 0.0)
        items = [{"token": token, "logprob": lp} for token, lp in top]
        return {"content": [{"token": first, "logprob": chosen, "top_logprobs": items}]}

    def openai_logprobs(self, asked: object, *, completions: bool) -> dict[str, object] | None:
        """The `logprobs` of an OpenAI choice when the request asked for them (completions:
        `logprobs: N`, chat: `logprobs: true`), else None."""
        if self.p_yes is None or not self.pieces:
            return None
        if completions and isinstance(asked, int) and not isinstance(asked, bool) and asked > 0:
            return self.legacy_logprobs()
        if not completions and asked is True:
            return self.chat_logprobs()
        return None

    def legacy_logprobs(self) -> dict[str, object]:
        """OpenAI's legacy completions `logprobs` of the first token."""
        content = self.chat_logprobs()["content"]
        assert isinstance(content, list)
        entry = content[0]
        return {
            "tokens": [entry["token"]],
            "token_logprobs": [entry["logprob"]],
            "top_logprobs": [{item["token"]: item["logprob"] for item in entry["top_logprobs"]}],
            "text_offset": [0],
        }


class SimServer:
    """The simulated model as an HTTP server on `host:port` (port 0 picks a free one)."""

    def __init__(
        self,
        profile: str = DEFAULT_PROFILE,
        seed: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
        kg: KnowledgeGraph | None = None,
        switches: ServeSwitches | None = None,
    ) -> None:
        self.profile = load_profile(profile)
        self.switches = switches or ServeSwitches()
        self.entities = EntityFinder(kg) if kg is not None else None
        self.patterns = TemplatePatterns(recheck=1.0)  # user template files may change
        self.profile_name = profile
        self.seed = seed
        self.host = host
        self.port = port
        self._server: asyncio.Server | None = None
        self._attempts = AttemptCounter()
        self._profiles = set(list_profiles())
        self.requests = 0
        self.posts: Counter[str] = Counter()  # POST requests by path (chats asked)
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def start(self) -> str:
        """Start listening; returns the base URL."""
        self._server = await asyncio.start_server(
            self._handle, self.host, self.port, limit=1 << 20, backlog=256
        )
        sockets = self._server.sockets
        if sockets:
            self.port = sockets[0].getsockname()[1]
        return self.url

    async def serve_forever(self) -> None:
        if self._server is None:
            await self.start()
        assert self._server is not None
        async with self._server:
            await self._server.serve_forever()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._writers):  # idle keep-alive connections
                writer.transport.abort()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    # ------------------------------------------------------------------ connection

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                try:
                    request = await read_request(reader)
                except BadRequest as error:
                    reply = Reply(writer, keep_alive=False)
                    await reply.send(error.status, encode_json({"error": str(error)}))
                    break
                if request is None:
                    break
                self.requests += 1
                if request.method == "POST":
                    self.posts[request.path] += 1
                reply = Reply(writer, request.keep_alive)
                try:
                    await self._dispatch(request, reply)
                except (ConnectionError, asyncio.CancelledError):
                    raise
                except Exception as error:  # a bug must not kill the server: answer 500
                    if reply.started:
                        raise ConnectionError("handler failed mid-response") from error
                    message = f"internal error: {type(error).__name__}: {error}"
                    reply.keep_alive = False
                    await reply.send(500, encode_json({"error": message}))
                if not reply.keep_alive:
                    break
        except (
            ConnectionError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ValueError,
        ):
            pass
        except asyncio.CancelledError:
            pass  # server shutting down: end this connection quietly
        finally:
            self._writers.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()

    async def _dispatch(self, request: HttpRequest, reply: Reply) -> None:
        routes: dict[tuple[str, str], Callable[[HttpRequest, Reply], Awaitable[None]]] = {
            ("POST", "/api/chat"): self._ollama_chat,
            ("GET", "/api/tags"): self._ollama_tags,
            ("POST", "/api/show"): self._ollama_show,
            ("GET", "/api/version"): self._ollama_version,
            ("POST", "/v1/chat/completions"): self._openai_chat,
            ("POST", "/v1/completions"): self._openai_completions,
            ("GET", "/v1/models"): self._openai_models,
            ("GET", "/"): self._root,
        }
        handler = routes.get((request.method, request.path))
        if handler is None and request.method == "GET" and request.path.startswith("/v1/models/"):
            handler = self._openai_model
        if handler is None:
            await reply.send(
                404, encode_json({"error": f"no route {request.method} {request.path}"})
            )
            return
        await handler(request, reply)

    # ------------------------------------------------------------------ decisions

    def _profile_for(self, model: object) -> SimProfile | None:
        """The profile a model name selects: a profile's name (`flaky`, `careful:latest`), the
        server's own for `sim`, its profile's name or no name; None for any other name."""
        base = str(model or "").strip().removesuffix(":latest")
        if base in ("", SERVER_MODEL, self.profile_name, self.profile.name):
            return self.profile
        if base in self._profiles:
            try:
                return load_profile(base)
            except KontestError:
                return self.profile
        return None

    def model_names(self) -> list[str]:
        """The names this server serves (its /api/tags and /v1/models)."""
        return sorted(self._profiles | {SERVER_MODEL, self.profile.name})

    async def _refused(
        self, reply: Reply, model: str, openai: bool, temperature: object = None
    ) -> bool:
        """Answer a chat for a model not served (404), under the `reject` switch or with a
        temperature the switches refuse (400); True when it is answered so."""
        if self._profile_for(model) is None:
            await self._unknown_model(reply, model, openai)
            return True
        refusal = self.switches.refuses_temperature(temperature)
        if refusal is not None:
            await self._bad(reply, refusal, openai)
            return True
        return await self._reject_all(reply, openai)

    async def _unknown_model(self, reply: Reply, model: str, openai: bool) -> None:
        """A real server's 404 for a model it does not serve (Ollama's or OpenAI's shape)."""
        if openai:
            body: dict[str, object] = {
                "error": {
                    "message": f"The model `{model}` does not exist.",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "model_not_found",
                }
            }
        else:
            body = {"error": f'model "{model}" not found, try pulling it first'}
        await reply.send(404, encode_json(body))

    async def _reject_all(self, reply: Reply, openai: bool) -> bool:
        """The `reject` switch: every chat gets the same error status and message."""
        status = self.switches.reject_status
        if status is None:
            return False
        message = self.switches.reject_message
        kind = "server_error" if status >= 500 else "invalid_request_error"
        body = {"error": {"message": message, "type": kind}} if openai else {"error": message}
        await reply.send(status, encode_json(body))
        return True

    def plan_turn(
        self,
        model: object,
        messages: Sequence[Message],
        seed: object,
        max_tokens: object,
        temperature: object = 0.0,
    ) -> Turn:
        """Decide the answer and fault of one request (the pure part, no I/O): the model is
        the server's seed; the request's seed draws the sample at temperature > 0."""
        profile = self._profile_for(model) or self.profile
        sample_seed = seed if isinstance(seed, int) and not isinstance(seed, bool) else None
        heat = (
            float(temperature)
            if isinstance(temperature, int | float) and not isinstance(temperature, bool)
            else 0.0
        )
        questions = [message.content for message in messages if message.role == "user"]
        attempt = self._attempts.next(profile.name, questions)
        fault = decide_fault(profile, self.seed, questions, attempt)
        reply = decide_reply(
            profile,
            self.seed,
            questions,
            self.entities,
            self.patterns.current(),
            temperature=heat,
            sample_seed=sample_seed,
        )
        text = reply.text
        limit = (
            max_tokens if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) else None
        )
        delay = profile.first_byte_ms + self.switches.latency_ms
        if fault == "slow_first_byte":
            delay += profile.faults.slow_first_byte_ms
        pieces = split_tokens(text, limit)
        turn = Turn(
            profile,
            pieces,
            fault,
            delay / 1000,
            profile.token_ms / 1000,
            p_yes=reply.p_yes,
            truncated=limit is not None and len(split_tokens(text)) > len(pieces),
        )
        if self.switches.reasoning is not None:
            turn.thinking = split_tokens(THINKING_TEXT)
            if self.switches.reasoning == "only":  # the budget ran out while it thought
                turn.pieces = []
        return turn

    async def _reject_fault(self, turn: Turn, reply: Reply, openai: bool) -> bool:
        """Send the 429/500 of a faulty turn; True when the request is answered."""
        if turn.fault == "rate_limit":
            after = turn.profile.faults.retry_after
            message = "rate limited (simulated)"
            body = (
                {"error": {"message": message, "type": "rate_limit"}}
                if openai
                else {"error": message}
            )
            await reply.send(429, encode_json(body), headers={"Retry-After": f"{after:g}"})
            return True
        if turn.fault == "server_error":
            message = "internal error (simulated)"
            body = (
                {"error": {"message": message, "type": "server_error"}}
                if openai
                else {"error": message}
            )
            await reply.send(500, encode_json(body))
            return True
        return False

    @staticmethod
    def _parse_body(request: HttpRequest) -> dict[str, object] | None:
        try:
            data = json.loads(request.body.decode("utf-8", "replace") or "{}")
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    @staticmethod
    def _messages(raw: object) -> list[Message] | None:
        if not isinstance(raw, list):
            return None
        messages = []
        for item in raw:
            if not isinstance(item, dict):
                return None
            content = item.get("content")
            if isinstance(content, list):  # OpenAI content parts
                content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            messages.append(Message(str(item.get("role", "user")), str(content or "")))
        return messages

    async def _bad(self, reply: Reply, message: str, openai: bool) -> None:
        body = (
            {"error": {"message": message, "type": "invalid_request_error"}}
            if openai
            else {"error": message}
        )
        await reply.send(400, encode_json(body))

    # ------------------------------------------------------------------ Ollama

    async def _ollama_chat(self, request: HttpRequest, reply: Reply) -> None:
        data = self._parse_body(request)
        messages = self._messages(data.get("messages")) if data else None
        if data is None or messages is None:
            await self._bad(reply, "body must be JSON with a messages list", openai=False)
            return
        options = data.get("options") if isinstance(data.get("options"), dict) else {}
        assert isinstance(options, dict)
        model = str(data.get("model") or self.profile_name)
        if await self._refused(reply, model, openai=False, temperature=options.get("temperature")):
            return
        turn = self.plan_turn(
            model,
            messages,
            options.get("seed"),
            options.get("num_predict"),
            options.get("temperature", 0.0),
        )
        logprobs = turn.chat_logprobs()["content"] if data.get("logprobs") is True else None
        if await self._reject_fault(turn, reply, openai=False):
            return
        if turn.delay_s:
            await asyncio.sleep(turn.delay_s)
        started = time.perf_counter_ns()
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        stream = data.get("stream", True) is not False or self.switches.ndjson
        cut = len(turn.pieces) // 2 if turn.fault == "dropped_stream" else None

        def final() -> dict[str, object]:
            return {
                "model": model,
                "created_at": created,
                "message": {"role": "assistant", "content": ""},
                "done": True,
                "done_reason": turn.finish,
                "total_duration": time.perf_counter_ns() - started,
                "eval_count": len(turn.thinking) + len(turn.pieces),
            }

        if not stream:
            if turn.token_s:
                await asyncio.sleep(turn.token_s * max(0, len(turn.pieces) - 1))
            body = _ollama_whole(final(), turn, logprobs)
            await reply.send(200, encode_json(body), cut=cut is not None)
            return
        await reply.start_stream("application/x-ndjson")
        for piece in turn.thinking:
            line: dict[str, object] = {
                "model": model,
                "created_at": created,
                "message": {"role": "assistant", "content": "", "thinking": piece},
                "done": False,
            }
            await reply.chunk(encode_json(line) + b"\n")
        for index, piece in enumerate(turn.pieces):
            if index == cut:
                reply.abort()
                return
            if index and turn.token_s:
                await asyncio.sleep(turn.token_s)
            line = {
                "model": model,
                "created_at": created,
                "message": {"role": "assistant", "content": piece},
                "done": False,
            }
            if index == 0 and logprobs:
                line["logprobs"] = logprobs
            await reply.chunk(encode_json(line) + b"\n")
        if cut is not None:  # a one-piece answer: cut before done
            reply.abort()
            return
        await reply.chunk(encode_json(final()) + b"\n")
        await reply.end_stream()

    async def _ollama_tags(self, request: HttpRequest, reply: Reply) -> None:
        models = [
            {
                "name": f"{name}:latest",
                "model": f"{name}:latest",
                "modified_at": "2026-01-01T00:00:00Z",
                "size": 0,
                "digest": "",
                "details": {"family": "kontest-sim", "format": "sim"},
            }
            for name in self.model_names()
        ]
        await reply.send(200, encode_json({"models": models}))

    async def _ollama_show(self, request: HttpRequest, reply: Reply) -> None:
        data = self._parse_body(request) or {}
        name = data.get("model") or data.get("name")
        profile = self._profile_for(name)
        if profile is None:
            await reply.send(404, encode_json({"error": f"model '{name}' not found"}))
            return
        body = {
            "modelfile": "",
            "parameters": "",
            "details": {"family": "kontest-sim"},
            "model_info": {"profile": profile.name},
        }
        await reply.send(200, encode_json(body))

    async def _ollama_version(self, request: HttpRequest, reply: Reply) -> None:
        await reply.send(200, encode_json({"version": "0.0.0-kontest-sim"}))

    async def _root(self, request: HttpRequest, reply: Reply) -> None:
        await reply.send(200, b"kontest sim server is running", content_type="text/plain")

    # ------------------------------------------------------------------ OpenAI

    async def _openai_models(self, request: HttpRequest, reply: Reply) -> None:
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": SERVER_NAME}
            for name in self.model_names()
        ]
        await reply.send(200, encode_json({"object": "list", "data": data}))

    async def _openai_model(self, request: HttpRequest, reply: Reply) -> None:
        name = request.path.removeprefix("/v1/models/")
        if self._profile_for(name) is None:
            await self._unknown_model(reply, name, openai=True)
            return
        await reply.send(
            200, encode_json({"id": name, "object": "model", "created": 0, "owned_by": SERVER_NAME})
        )

    async def _openai_chat(self, request: HttpRequest, reply: Reply) -> None:
        data = self._parse_body(request)
        messages = self._messages(data.get("messages")) if data else None
        if data is None or messages is None:
            await self._bad(reply, "body must be JSON with a messages list", openai=True)
            return
        await self._openai_answer(data, messages, reply, completions=False)

    async def _openai_completions(self, request: HttpRequest, reply: Reply) -> None:
        data = self._parse_body(request)
        prompt = data.get("prompt") if data else None
        if isinstance(prompt, list) and prompt:
            prompt = prompt[0]
        if data is None or not isinstance(prompt, str):
            await self._bad(reply, "body must be JSON with a prompt string", openai=True)
            return
        await self._openai_answer(data, parse_completion_prompt(prompt), reply, completions=True)

    def _whole_choice(
        self, turn: Turn, completions: bool, logprobs: dict[str, object] | None
    ) -> dict[str, object]:
        """The one choice of a whole (not streamed) answer, its reasoning beside the content."""
        text = "".join(turn.pieces)
        choice: dict[str, object] = {
            "index": 0,
            "finish_reason": turn.finish,
            "logprobs": logprobs,
        }
        if completions:
            choice["text"] = text
            return choice
        # a reasoning model with no answer sends content null (vLLM's reasoning parsers)
        content = text if text or not turn.thinking else None
        message: dict[str, object] = {"role": "assistant", "content": content}
        if turn.thinking:
            message[self.switches.reasoning_field] = "".join(turn.thinking)
        choice["message"] = message
        return choice

    async def _openai_answer(
        self, data: dict[str, object], messages: list[Message], reply: Reply, *, completions: bool
    ) -> None:
        model = str(data.get("model") or self.profile_name)
        if await self._refused(reply, model, openai=True, temperature=data.get("temperature")):
            return
        max_tokens = data.get("max_tokens", data.get("max_completion_tokens"))
        turn = self.plan_turn(
            model, messages, data.get("seed"), max_tokens, data.get("temperature", 0.0)
        )
        logprobs = turn.openai_logprobs(data.get("logprobs"), completions=completions)
        if await self._reject_fault(turn, reply, openai=True):
            return
        if turn.delay_s:
            await asyncio.sleep(turn.delay_s)
        created = int(time.time())
        ident = f"{'cmpl' if completions else 'chatcmpl'}-sim{self.requests}"
        cut = len(turn.pieces) // 2 if turn.fault == "dropped_stream" else None
        usage = {
            "prompt_tokens": 0,
            "completion_tokens": len(turn.pieces),
            "total_tokens": len(turn.pieces),
        }
        reasoning = self.switches.reasoning_field
        if data.get("stream") is not True:
            if turn.token_s:
                await asyncio.sleep(turn.token_s * max(0, len(turn.pieces) - 1))
            choice = self._whole_choice(turn, completions, logprobs)
            body = {
                "id": ident,
                "object": "text_completion" if completions else "chat.completion",
                "created": created,
                "model": model,
                "choices": [choice],
                "usage": usage,
            }
            await reply.send(200, encode_json(body), cut=cut is not None)
            return
        kind = "text_completion" if completions else "chat.completion.chunk"

        def event(
            piece: str | None, finish: str | None, field: str = "content", first: bool = False
        ) -> bytes:
            choice: dict[str, object] = {"index": 0, "finish_reason": finish}
            if first and logprobs is not None:
                choice["logprobs"] = logprobs
            if completions:
                choice["text"] = piece or ""
            else:
                choice["delta"] = {field: piece} if piece is not None else {}
            body = {
                "id": ident,
                "object": kind,
                "created": created,
                "model": model,
                "choices": [choice],
            }
            return b"data: " + encode_json(body) + b"\n\n"

        await reply.start_stream("text/event-stream")
        if not completions:
            await reply.chunk(
                b"data: "
                + encode_json(
                    {
                        "id": ident,
                        "object": kind,
                        "created": created,
                        "model": model,
                        "choices": [
                            {
                                "index": 0,
                                "delta": {"role": "assistant", "content": ""},
                                "finish_reason": None,
                            }
                        ],
                    }
                )
                + b"\n\n"
            )
        for piece in turn.thinking if not completions else ():
            await reply.chunk(event(piece, None, reasoning))
        for index, piece in enumerate(turn.pieces):
            if index == cut:
                reply.abort()
                return
            if index and turn.token_s:
                await asyncio.sleep(turn.token_s)
            await reply.chunk(event(piece, None, first=index == 0))
        if cut is not None:
            reply.abort()
            return
        await reply.chunk(event(None, turn.finish) + b"data: [DONE]\n\n")
        await reply.end_stream()


def _ollama_whole(
    body: dict[str, object], turn: Turn, logprobs: object | None
) -> dict[str, object]:
    """Ollama's whole (not streamed) answer: the final line with the message, its thinking and
    the first token's log-probabilities when asked."""
    message = {"role": "assistant", "content": "".join(turn.pieces)}
    if turn.thinking:
        message["thinking"] = "".join(turn.thinking)
    body["message"] = message
    if logprobs:
        body["logprobs"] = logprobs
    return body


async def run_server(
    profile: str = DEFAULT_PROFILE,
    seed: int = 0,
    host: str = "127.0.0.1",
    port: int = 0,
    on_ready: Callable[[str], None] | None = None,
    kg: KnowledgeGraph | None = None,
    switches: ServeSwitches | None = None,
) -> None:
    """Serve until cancelled; `on_ready(url)` is called once listening."""
    server = SimServer(profile=profile, seed=seed, host=host, port=port, kg=kg, switches=switches)
    url = await server.start()
    if on_ready is not None:
        on_ready(url)
    try:
        await server.serve_forever()
    finally:
        await server.close()
