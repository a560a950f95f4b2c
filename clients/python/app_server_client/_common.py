"""What the sync and asyncio flavours share: options, the retry policy, the safe answers to
server requests nobody handles, message classification, the shapes of exec chunks and turn
events, and how a connection's end is explained."""
from __future__ import annotations

import os
import random
import signal
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from .errors import ConnectionClosedError

STDERR_KEEP = 64 * 1024
#: Bytes of undelivered exec output above which reading stops (while no request waits).
EXEC_HIGH_WATER = 8 * 1024 * 1024
EXEC_LOW_WATER = 1024 * 1024


@dataclass(frozen=True)
class RetryPolicy:
    """Retry -32001 ("Server overloaded; retry later.") with exponential backoff and jitter."""

    retries: int = 8
    base: float = 0.025  # seconds, doubled each retry
    maximum: float = 2.0  # ceiling of one delay

    def delay(self, attempt: int, rand: Callable[[], float] = random.random) -> float:
        """Delay before retry `attempt` (0-based): half fixed, half random ("equal jitter")."""
        ceiling = min(self.maximum, self.base * 2**attempt)
        return ceiling / 2 + rand() * ceiling / 2


@dataclass
class Options:
    binary: str | None = None
    args: Sequence[str] = ()
    env: Mapping[str, str | None] | None = None
    cwd: str | None = None
    client_info: Mapping[str, Any] | None = None
    capabilities: Mapping[str, Any] | None = None
    stderr: str = "pipe"  # "pipe" (kept for error messages), "inherit" or "ignore"
    retry: RetryPolicy | None = field(default_factory=RetryPolicy)
    max_line_bytes: int = 512 * 1024 * 1024  # also the ceiling of one WebSocket message
    shutdown_timeout: float = 5.0
    #: Connect to a running daemon (ws://HOST:PORT or unix:///PATH) instead of spawning one.
    url: str | None = None
    #: The bearer token the daemon's --ws-auth asks for (sent in the upgrade's Authorization).
    token: str | None = None
    connect_timeout: float = 10.0

    def command(self) -> list[str]:
        binary = self.binary or os.environ.get("APP_SERVER_BIN") or "app-server"
        return [binary, *self.args]

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        for k, v in (self.env or {}).items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        return env

    def initialize_params(self) -> dict[str, Any]:
        info = dict(self.client_info or {"name": "app-server-client-py", "version": "0.1.0"})
        params: dict[str, Any] = {"clientInfo": info}
        if self.capabilities is not None:
            params["capabilities"] = dict(self.capabilities)
        return params


@dataclass(frozen=True)
class ExecChunk:
    stream: str  # "stdout" or "stderr"
    data: bytes
    cap_reached: bool


@dataclass(frozen=True)
class TurnEvent:
    method: str
    params: Any


def default_server_answer(method: str) -> Any | None:
    """The safe answer to a server request nobody handles: decline what asks for consent."""
    if method in ("item/commandExecution/requestApproval", "item/fileChange/requestApproval"):
        return {"decision": "decline"}
    if method in ("execCommandApproval", "applyPatchApproval"):
        return {"decision": "denied"}
    if method == "mcpServer/elicitation/request":
        return {"action": "decline"}
    if method == "item/permissions/requestApproval":
        return {"permissions": {}, "scope": "turn"}
    return None


def turn_id_of(params: Any) -> str | None:
    """The turn a notification names (params.turnId or params.turn.id), if any."""
    if not isinstance(params, dict):
        return None
    if isinstance(params.get("turnId"), str):
        return params["turnId"]
    turn = params.get("turn")
    if isinstance(turn, dict) and isinstance(turn.get("id"), str):
        return turn["id"]
    return None


def user_input(value: str | Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(value, str):
        return [{"type": "text", "text": value, "text_elements": []}]
    return [dict(v) for v in value]


def closed_error(returncode: int | None, stderr_tail: bytes, start_error: str | None) -> ConnectionClosedError:
    """Why the connection ended, with the last lines of the daemon's stderr."""
    if start_error is not None:
        return ConnectionClosedError(start_error, returncode)
    if returncode is not None and returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        why = f"app-server was killed by {name}"
    else:
        why = f"app-server exited with status {returncode}"
    tail = "\n".join(stderr_tail.decode("utf-8", "replace").strip().splitlines()[-5:])
    return ConnectionClosedError(f"{why}; its stderr ends with:\n{tail}" if tail else why, returncode)


def socket_closed_error(url: str, code: int | None, reason: str) -> ConnectionClosedError:
    """Why a connection to a listening daemon ended: its close status, or the socket's end."""
    if code is None or code == 1006:
        return ConnectionClosedError(f"the connection to {url} ended without a close frame")
    return ConnectionClosedError(f"the daemon at {url} closed the connection ({code}{': ' + reason if reason else ''})")


def error_reply(req_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"id": req_id, "error": {"code": code, "message": message}}
