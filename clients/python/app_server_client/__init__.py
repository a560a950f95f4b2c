"""app-server-client: spawn app-server and speak its JSON-RPC protocol (v2) over stdio, or
connect to one listening on ws:// or unix:// (`connect(url, token=None)`).

Two flavours with the same capabilities: `app_server_client.spawn()` (threads; blocking calls)
and `app_server_client.aio.spawn()` (asyncio). Types: `app_server_client.protocol`, generated
by `app-server generate-python` from the daemon's protocol tables.
"""
from ._common import ExecChunk, Options, RetryPolicy, TurnEvent, default_server_answer
from ._lines import DEFAULT_MAX_LINE_BYTES, LineSplitter, LineTooLongError
from ._ws import WebSocketError
from .client import Connection, ExecProcess, Thread, Turn, connect, spawn
from .errors import (INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, OVERLOADED, PARSE_ERROR,
                     ConnectionClosedError, RequestTimeoutError, RpcError)

__all__ = [
    "Connection", "ExecProcess", "Thread", "Turn", "spawn", "connect", "WebSocketError", "Options", "RetryPolicy", "ExecChunk", "TurnEvent",
    "default_server_answer", "LineSplitter", "LineTooLongError", "DEFAULT_MAX_LINE_BYTES", "RpcError",
    "ConnectionClosedError", "RequestTimeoutError", "PARSE_ERROR", "INVALID_REQUEST", "METHOD_NOT_FOUND",
    "INVALID_PARAMS", "INTERNAL_ERROR", "OVERLOADED",
]
