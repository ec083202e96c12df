"""`kontest --web`: the explorer served to a browser by textual-serve, behind a token.

A served explorer runs models with the user's API keys, so the server admits only who holds
the token printed with its URL (a fresh random one per launch, as Jupyter does):

- the page (`/`) and the download route need `?token=TOKEN` or the cookie the page sets
  (`HttpOnly`, `SameSite=Strict`, so another site's page never sends it);
- the websocket needs the token too, and an `Origin` that is the server's own (the `Host`
  the request names): a page on another origin that found the port gets 403, with or
  without the token;
- on a loopback address the `Host` header must name loopback (`127.0.0.1`, `localhost`,
  `[::1]`), so a DNS-rebound name cannot pass as the server's own origin.

Static files (the terminal's JavaScript and fonts, the same for everyone) need no token;
`/static/` lists no folder (404). The hook is one aiohttp middleware added to textual-serve's
own application (`_make_app`); the rest of textual-serve (the process per tab, downloads) is
used as it is. The page is textual-serve's own template with its font served from `/static/`
(`assets/web/app_index.html`: the original fetched it from Google Fonts; nothing the page
loads leaves the machine).

The server's terminal gets one line per request and per error (`initialize_logging`): the
token is masked in the access log (the address and the Referer of every load hold it), and a
malformed request (no Host header, a bad request line) is one line, never the 40-line
traceback with the request's bytes that textual-serve's logging printed.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import secrets
import socket
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from aiohttp import web
from textual_serve.server import Server

from kontest_tui.errors import KontestError
from kontest_tui.redact import MASK, scrub
from kontest_tui.resources import asset_path
from kontest_tui.safe_text import escape_unsafe

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
COOKIE = "kontest_token"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address, IPv6 with or without brackets) is this machine only."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_name(netloc: str) -> str:
    """The host part of `host[:port]` or `[v6]:port`."""
    return urlsplit(f"//{netloc}").hostname or ""


# The loggers whose records reach the server's terminal (aiohttp's access and error logs,
# textual-serve's own).
SERVER_LOGGERS = ("aiohttp", "textual-serve")


class OneLineRecords(logging.Filter):
    """Each log record as one line with the token masked: the message formatted, scrubbed
    (the token, any key) and its control characters escaped; an exception becomes its type
    and message on the same line, never a traceback (which held the request's bytes)."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            reason = getattr(error, "message", None) or str(error)
            message = f"{message}: {type(error).__name__}: {reason}"
        record.msg = escape_unsafe(" ".join(scrub(message.replace(self.token, MASK)).split()))
        record.args = None
        record.exc_info = record.exc_text = None
        record.stack_info = None
        return True


class WebServeError(KontestError):
    """The browser server could not start (the port is taken, the address is not ours)."""


class TokenServer(Server):
    """textual-serve's Server with a per-launch token and an Origin check on every route."""

    def __init__(self, command: str, host: str, port: int, token: str | None = None) -> None:
        shown = f"[{host}]" if ":" in host else host
        super().__init__(
            command,
            host=host,
            port=port,
            title="kontest-tui",
            templates_path=asset_path("web"),  # the page, its font served from /static/
        )
        self.public_url = f"http://{shown}:{port}"
        self.token = token or secrets.token_urlsafe(24)
        self.loopback_only = is_loopback(host)

    @property
    def url(self) -> str:
        """The address to open, token included."""
        return f"{self.public_url}/?token={self.token}"

    def refusal(self, request: web.Request) -> str | None:
        """Why `request` is refused, or None when it may go on."""
        if request.path.startswith("/static/"):
            return None  # the same for everyone (a folder is not listed: `guard`)
        host = request.headers.get("Host", "")
        if self.loopback_only and not is_loopback(host_name(host)):
            return "this server answers only to a loopback Host"
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc.lower() != host.lower():
            return "a page on another origin may not use this server"
        given = request.query.get("token") or request.cookies.get(COOKIE) or ""
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return "open the address with its token, as printed when the server started"
        return None

    @web.middleware
    async def guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Refuse requests without the token or from another origin (403, one line)."""
        reason = self.refusal(request)
        if reason is not None:
            raise web.HTTPForbidden(text=f"kontest: forbidden: {reason}\n")
        if request.path.startswith("/static/") and not self.is_static_file(request):
            raise web.HTTPNotFound(text="kontest: not found\n")
        response = await handler(request)
        if request.query.get("token") and request.path == "/":
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="Strict")
        return response

    def is_static_file(self, request: web.Request) -> bool:
        """Whether a /static/ request names a file of the static folder (not the folder, not
        a subfolder: textual-serve lists folders)."""
        name = request.match_info.get("filename", "")
        folder = self.statics_path.resolve()
        target = (folder / name).resolve()
        return target.is_file() and target.is_relative_to(folder)

    def initialize_logging(self) -> None:
        """One line per request and per error on the server's terminal, the token masked
        (OneLineRecords), instead of textual-serve's Rich tracebacks with their locals."""
        handler = logging.StreamHandler(self.console.file)
        handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
        handler.addFilter(OneLineRecords(self.token))
        for name in SERVER_LOGGERS:
            logger = logging.getLogger(name)
            logger.handlers[:] = [handler]
            logger.setLevel(logging.INFO)
            logger.propagate = False

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self.guard)
        return app

    async def on_startup(self, app: web.Application) -> None:
        self.console.print(f"kontest-tui in a browser: {self.url}", highlight=False, markup=False)
        if not self.loopback_only:
            self.console.print(
                f"warning: listening on {self.host}, not only this machine: anyone who can "
                "reach it and has the token runs models with your keys",
                style="bold yellow",
                highlight=False,
                markup=False,
            )
        self.console.print("Press Ctrl+C to quit", highlight=False, markup=False)


def check_port(host: str, port: int) -> None:
    """WebServeError when host:port cannot be listened on (taken, not this machine's): said
    before the server starts, which prints its address and token as it starts (before it
    binds: otherwise a URL with a token is printed above the line saying it cannot listen)."""
    try:
        with socket.create_server((host.strip("[]"), port)):
            pass
    except OSError as error:
        raise WebServeError(
            f"--web: cannot listen on {host}:{port}: {error.strerror or error}"
        ) from None


def serve(command: str, host: str, port: int) -> None:
    """Serve `command` (the explorer) on host:port until Ctrl+C; a taken port is one line."""
    check_port(host, port)
    server = TokenServer(command, host=host, port=port)
    try:
        server.serve()
    except OSError as error:  # taken between the check and the start
        raise WebServeError(
            f"--web: cannot listen on {host}:{port}: {error.strerror or error}"
        ) from None
