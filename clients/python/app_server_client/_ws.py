"""A small RFC 6455 WebSocket client, stdlib only, for a daemon started with --listen.

ws://HOST:PORT[/PATH] is TCP; unix:///PATH is the same framing over a Unix socket (the
daemon's `--listen unix://PATH`). The codec is sans-I/O (FrameReader, encode_frame, the
handshake's texts) so the threaded and the asyncio clients share it; WebSocket below is the
blocking flavour.

Rules it keeps:
- The upgrade's Sec-WebSocket-Accept must be the SHA-1 of our random key (RFC 6455 4.2.2);
  anything but a 101 is refused with the status line and the body's first line, so a 401 from
  --ws-auth says why.
- Our frames are masked with a fresh key; the server's must not be (close 1002 otherwise).
- A message is refused from the frame header that would take it past max_message (close 1009),
  before its payload is buffered; control frames are at most 125 bytes and never fragmented.
- Ping is answered with pong, also between the fragments of a message; a close is answered
  once, and the socket is shut after both close frames went.
"""
from __future__ import annotations

import base64
import hashlib
import os
import socket
import struct
import threading
import urllib.parse
from typing import Any

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
#: The upgrade answer's head (status line and headers) may not be longer.
MAX_HANDSHAKE = 16 * 1024


class WebSocketError(ConnectionError):
    """A protocol failure; `code` is the close status we send for it (1002, 1007, 1009)."""

    def __init__(self, message: str, code: int = 1002) -> None:
        super().__init__(message)
        self.code = code


class Target:
    """Where a URL points: ("tcp", (host, port)) or ("unix", path), with the request's Host and path."""

    def __init__(self, url: str) -> None:
        u = urllib.parse.urlsplit(url)
        self.url = url
        if u.scheme == "ws":
            if u.hostname is None or u.port is None:
                raise ValueError(f"{url}: expected ws://HOST:PORT")
            self.kind, self.address = "tcp", (u.hostname, u.port)
            self.host = u.netloc
            self.path = (u.path or "/") + (f"?{u.query}" if u.query else "")
        elif u.scheme == "unix":
            path = urllib.parse.unquote(u.netloc + u.path)
            if not path:
                raise ValueError(f"{url}: expected unix:///PATH")
            self.kind, self.address = "unix", path
            self.host, self.path = "localhost", "/"
        else:
            raise ValueError(f"{url}: the scheme must be ws:// or unix://")


def accept_key(key: str) -> str:
    return base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()


def handshake_request(target: Target, key: str, token: str | None) -> bytes:
    lines = [f"GET {target.path} HTTP/1.1", f"Host: {target.host}", "Upgrade: websocket", "Connection: Upgrade",
             f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def check_handshake(head: bytes, body: bytes, key: str) -> None:
    """Raise ConnectionRefusedError unless `head` is a 101 with our accept key."""
    text = head.decode("latin-1")
    status, *header_lines = text.split("\r\n")
    parts = status.split(" ", 2)
    headers = {}
    for line in header_lines:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    if len(parts) < 2 or parts[1] != "101":
        why = body.decode("utf-8", "replace").strip().splitlines()
        raise ConnectionRefusedError(f"the daemon refused the upgrade: {status.strip()}" + (f": {why[0]}" if why else ""))
    if headers.get("upgrade", "").lower() != "websocket" or "upgrade" not in headers.get("connection", "").lower():
        raise ConnectionRefusedError("the daemon's 101 is not a WebSocket upgrade")
    if headers.get("sec-websocket-accept") != accept_key(key):
        raise ConnectionRefusedError("the daemon's Sec-WebSocket-Accept does not match our key")


def _mask(payload: bytes, key: bytes) -> bytes:
    n = len(payload)
    if n == 0:
        return b""
    # XOR as one big integer: linear, and fast enough for messages of tens of MiB.
    m = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "little") ^ int.from_bytes(m, "little")).to_bytes(n, "little")


def encode_frame(opcode: int, payload: bytes, fin: bool = True) -> bytes:
    """One masked client frame."""
    n = len(payload)
    first = (0x80 if fin else 0) | opcode
    if n < 126:
        head = struct.pack("!BB", first, 0x80 | n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", first, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", first, 0x80 | 127, n)
    key = os.urandom(4)
    return head + key + _mask(payload, key)


def close_payload(code: int, reason: str = "") -> bytes:
    return struct.pack("!H", code) + reason.encode()[:123]


class FrameReader:
    """Bytes in, events out: ("text"|"binary", bytes), ("ping"|"pong", bytes), ("close", code, reason)."""

    def __init__(self, max_message: int) -> None:
        self.max_message = max_message
        self._buf = bytearray()
        self._parts: list[bytes] = []
        self._size = 0
        self._opcode: int | None = None  # the data message being reassembled

    def feed(self, data: bytes) -> list[tuple[Any, ...]]:
        self._buf += data
        events: list[tuple[Any, ...]] = []
        while (ev := self._next()) is not None:
            if ev != ():
                events.append(ev)
        return events

    def _next(self) -> tuple[Any, ...] | None:
        b = self._buf
        if len(b) < 2:
            return None
        fin, rsv, opcode = b[0] & 0x80, b[0] & 0x70, b[0] & 0x0F
        masked, n, at = b[1] & 0x80, b[1] & 0x7F, 2
        if rsv:
            raise WebSocketError("a frame with RSV bits set")
        if masked:
            raise WebSocketError("a masked frame from the server")
        if n == 126:
            if len(b) < 4:
                return None
            n, at = struct.unpack_from("!H", b, 2)[0], 4
        elif n == 127:
            if len(b) < 10:
                return None
            n, at = struct.unpack_from("!Q", b, 2)[0], 10
        control = opcode >= 0x8
        if control and (n > 125 or not fin):
            raise WebSocketError("a control frame longer than 125 bytes or fragmented")
        if opcode not in (CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG):
            raise WebSocketError(f"a frame with the reserved opcode {opcode}")
        if not control:
            if opcode == CONTINUATION and self._opcode is None:
                raise WebSocketError("a continuation frame outside a message")
            if opcode != CONTINUATION and self._opcode is not None:
                raise WebSocketError("a new message inside a fragmented one")
            if self._size + n > self.max_message:  # from the header: nothing of it is buffered
                raise WebSocketError(f"a message longer than {self.max_message} bytes", 1009)
        if len(b) < at + n:
            return None
        payload = bytes(b[at:at + n])
        del b[:at + n]
        if opcode == PING:
            return ("ping", payload)
        if opcode == PONG:
            return ("pong", payload)
        if opcode == CLOSE:
            if len(payload) == 1:
                raise WebSocketError("a close frame with a 1-byte payload")
            code = struct.unpack_from("!H", payload)[0] if payload else 1005
            return ("close", code, payload[2:].decode("utf-8", "replace"))
        if opcode != CONTINUATION:
            self._opcode = opcode
        self._parts.append(payload)
        self._size += n
        if not fin:
            return ()
        msg, kind = b"".join(self._parts), self._opcode
        self._parts, self._size, self._opcode = [], 0, None
        if kind == TEXT:
            try:
                msg.decode("utf-8")
            except UnicodeDecodeError:
                raise WebSocketError("a text message that is not UTF-8", 1007) from None
            return ("text", msg)
        return ("binary", msg)


def split_head(buf: bytes) -> tuple[bytes, bytes] | None:
    """The upgrade answer's head and what follows it, once the blank line arrived."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        if len(buf) > MAX_HANDSHAKE:
            raise ConnectionRefusedError("the daemon's upgrade answer is too long")
        return None
    return buf[:end], buf[end + 4:]


class WebSocket:
    """A blocking client connection: one thread may recv() while others send_text()."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 10.0,
                 max_message: int = 512 * 1024 * 1024) -> None:
        target = Target(url)
        self.url = url
        self.close_code: int | None = None  # the daemon's close status, once it came
        self.close_reason = ""
        self._lock = threading.Lock()
        self._close_sent = False
        self._reader = FrameReader(max_message)
        if target.kind == "tcp":
            self._sock = socket.create_connection(target.address, timeout)  # type: ignore[arg-type]
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        else:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # close-on-exec by default
            try:
                self._sock.settimeout(timeout)
                self._sock.connect(target.address)
            except OSError:
                self._sock.close()
                raise
        try:
            self._handshake(target, token)
        except BaseException:
            self._sock.close()
            raise
        self._sock.settimeout(None)

    def _handshake(self, target: Target, token: str | None) -> None:
        key = base64.b64encode(os.urandom(16)).decode()
        self._sock.sendall(handshake_request(target, key, token))
        buf = b""
        while (parts := split_head(buf)) is None:
            chunk = self._sock.recv(4096)
            if not chunk:
                raise ConnectionRefusedError(f"{self.url}: the daemon closed the connection during the upgrade")
            buf += chunk
        head, rest = parts
        if not head.startswith(b"HTTP/1.1 101"):
            # A refusal: read what of its body comes soon (it names the reason).
            self._sock.settimeout(0.5)
            try:
                while len(rest) < 4096 and (chunk := self._sock.recv(4096)):
                    rest += chunk
            except OSError:
                pass
        check_handshake(head, rest, key)
        self._pending: list[tuple[Any, ...]] = []
        self._early = rest  # frames that came with the 101: read by the first recv()

    def send_text(self, data: bytes) -> None:
        self._send(encode_frame(TEXT, data))

    def _send(self, frame: bytes) -> None:
        with self._lock:
            if self._close_sent:
                raise BrokenPipeError("the WebSocket is closing")
            self._sock.sendall(frame)

    def send_close(self, code: int = 1000, reason: str = "") -> None:
        """Start (or answer) the close handshake; later sends fail."""
        with self._lock:
            if self._close_sent:
                return
            self._close_sent = True
            try:
                self._sock.sendall(encode_frame(CLOSE, close_payload(code, reason)))
            except OSError:
                pass

    def recv(self) -> bytes | None:
        """The next text message, or None once the connection closed (close_code says how)."""
        while True:
            while self._pending:
                ev = self._pending.pop(0)
                if ev[0] == "text":
                    return ev[1]
                if ev[0] == "ping":
                    try:
                        self._send(encode_frame(PONG, ev[1]))
                    except OSError:
                        pass
                elif ev[0] == "close":
                    self.close_code, self.close_reason = ev[1], ev[2]
                    self.send_close(1000 if ev[1] in (1005, 1006) else ev[1])
                    self.shutdown()
                    return None
                # binary messages and pongs are not the protocol: dropped
            try:
                chunk, self._early = self._early or self._sock.recv(1 << 16), b""
            except OSError:
                chunk = b""
            if not chunk:
                if self.close_code is None:
                    self.close_code = 1006
                return None
            try:
                self._pending = self._reader.feed(chunk)
            except WebSocketError as e:
                self.close_code, self.close_reason = e.code, str(e)
                self.send_close(e.code, str(e))
                self.shutdown()
                raise

    def shutdown(self) -> None:
        """Shut the socket both ways (recv() then sees the end); the fd is freed by close()."""
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def close(self) -> None:
        self._sock.close()
