#!/usr/bin/env python3
"""A raw-socket WebSocket client (Python stdlib only) for test_ws.c: frames built by hand, so it
can send what a browser never would (unmasked frames, reserved opcodes, a 1 GB frame header,
a request dribbled byte by byte) and check the daemon's answers byte for byte.

usage: ws_check.py CASE --addr ws://127.0.0.1:PORT|unix:///PATH --pid PID [--log FILE] [--file F]
Exit 0 when the case holds; otherwise a message on stderr and exit 1.
"""
import argparse
import base64
import hashlib
import json
import os
import socket
import struct
import subprocess
import sys
import time

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
ARGS = None


def fail(msg):
    raise AssertionError(msg)


def raw_connect(timeout=10.0):
    a = ARGS.addr
    if ARGS.proxy:
        # through `app-server proxy`: its stdin and stdout are one end of a socket pair
        s, theirs = socket.socketpair()
        subprocess.Popen([ARGS.proxy, "proxy", "--sock", a[7:]], stdin=theirs, stdout=theirs)
        theirs.close()
        s.settimeout(timeout)
        return s
    if a.startswith("unix://"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(a[7:])
    else:
        host, port = a[5:].rsplit(":", 1)
        s = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
    return s


class Conn:
    def __init__(self, rcvbuf=None, handshake=True):
        self.s = raw_connect()
        if rcvbuf:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.buf = b""
        if handshake:
            self.handshake()

    def handshake(self):
        key = base64.b64encode(os.urandom(16))
        auth = b"Authorization: Bearer " + ARGS.token.encode() + b"\r\n" if ARGS.token else b""
        self.s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                       b"Sec-WebSocket-Key: " + key + b"\r\nSec-WebSocket-Version: 13\r\n" + auth + b"\r\n")
        head = self.read_until(b"\r\n\r\n")
        want = base64.b64encode(hashlib.sha1(key + GUID).digest())
        lines = [ln.split(b":", 1) for ln in head.split(b"\r\n")[1:] if b":" in ln]
        got = {k.strip().lower(): v.strip() for k, v in lines}
        if not head.startswith(b"HTTP/1.1 101 ") or got.get(b"sec-websocket-accept") != want:
            fail("bad upgrade answer: %r" % head)

    def read_until(self, sep):
        while sep not in self.buf:
            d = self.s.recv(65536)
            if not d:
                fail("EOF before %r (have %r)" % (sep, self.buf[:200]))
            self.buf += d
        i = self.buf.index(sep) + len(sep)
        head, self.buf = self.buf[:i], self.buf[i:]
        return head

    def read_n(self, n):
        while len(self.buf) < n:
            d = self.s.recv(max(65536, n - len(self.buf)))
            if not d:
                fail("EOF after %d of %d bytes" % (len(self.buf), n))
            self.buf += d
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def frame(self):
        """(fin, opcode, payload) of the next server frame; server frames are never masked."""
        b0, b1 = self.read_n(2)
        if b1 & 0x80:
            fail("a server frame is masked")
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", self.read_n(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self.read_n(8))[0]
        return bool(b0 & 0x80), b0 & 0x0F, self.read_n(n)

    def send(self, op, payload=b"", fin=True, mask=True, rsv=0, length=None):
        self.s.sendall(frame(op, payload, fin, mask, rsv, length))

    def text(self, obj):
        self.send(1, json.dumps(obj).encode())

    def message(self):
        """The next whole text message, parsed; control frames are checked and skipped."""
        fin, op, p = self.frame()
        if op != 1 or not fin:
            fail("expected one whole text frame, got op %d fin %d: %r" % (op, fin, p[:100]))
        if p.endswith(b"\n"):
            fail("a message carries its line's newline")
        return json.loads(p)

    def answer(self, rid):
        while True:
            m = self.message()
            if m.get("id") == rid and "method" not in m:
                return m

    def init(self):
        self.text({"id": 0, "method": "initialize",
                   "params": {"clientInfo": {"name": "ws-check", "version": "1"}}})
        if "result" not in self.answer(0):
            fail("initialize failed")

    def expect_close(self, code, also=()):
        """The server's close frame with this code (or one of also: None, no code), then EOF."""
        while True:
            fin, op, p = self.frame()
            if op == 8:
                break
            if op not in (1, 9, 10):
                fail("unexpected opcode %d" % op)
        got = struct.unpack(">H", p[:2])[0] if len(p) >= 2 else None
        if got != code and got not in also:
            fail("close code %r, expected %d (%r)" % (got, code, p))
        self.expect_eof()

    def expect_eof(self, timeout=5.0):
        self.s.settimeout(timeout)
        try:
            while self.s.recv(65536):
                pass
        except ConnectionResetError:
            pass
        self.s.close()


def frame(op, payload=b"", fin=True, mask=True, rsv=0, length=None):
    n = len(payload) if length is None else length
    b0 = (0x80 if fin else 0) | (rsv << 4) | op
    mbit = 0x80 if mask else 0
    if n < 126:
        hdr = bytes([b0, mbit | n])
    elif n < 65536:
        hdr = bytes([b0, mbit | 126]) + struct.pack(">H", n)
    else:
        hdr = bytes([b0, mbit | 127]) + struct.pack(">Q", n)
    if mask:
        key = os.urandom(4)
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
        hdr += key
    return hdr + payload


def fd_count():
    return len(os.listdir("/proc/%d/fd" % ARGS.pid))


def rss_kib():
    with open("/proc/%d/status" % ARGS.pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def curl(path, *extra):
    a = ARGS.addr
    base = ["curl", "-s", "-o", "-", "-w", "\n%{http_code}", "--max-time", "5"]
    if a.startswith("unix://"):
        cmd = base + ["--unix-socket", a[7:], "http://localhost" + path]
    else:
        cmd = base + ["http://" + a[5:] + path]
    out = subprocess.run(cmd + list(extra), capture_output=True, check=True).stdout.decode()
    body, code = out.rsplit("\n", 1)
    return int(code), body


def case_http():
    """upstream's probes and refusals, through curl"""
    for p in ("/readyz", "/healthz"):
        if curl(p) != (200, ""):
            fail("%s: %r" % (p, curl(p)))
    if curl("/readyz", "-H", "Origin: http://evil.example") != (403, ""):
        fail("Origin not refused")
    code, body = curl("/")
    if (code, body) != (400, "Connection header did not include 'upgrade'"):
        fail("plain GET /: %r" % ((code, body),))


def case_basic():
    """ping/pong, fragmentation with a control frame between fragments, bad JSON, close"""
    c = Conn()
    c.init()
    c.send(9, b"are you there")
    fin, op, p = c.frame()
    if (op, p) != (10, b"are you there"):
        fail("pong: %r %r" % (op, p))
    req = json.dumps({"id": 5, "method": "command/exec",
                      "params": {"command": ["echo", "fragmented"]}}).encode()
    c.send(1, req[:10], fin=False)
    c.send(9, b"mid")
    c.send(0, req[10:30], fin=False)
    c.send(0, req[30:], fin=True)
    fin, op, p = c.frame()
    if (op, p) != (10, b"mid"):
        fail("pong between fragments: %r" % p)
    m = c.answer(5)
    if m.get("result", {}).get("stdout") != "fragmented\n":
        fail("exec answer: %r" % m)
    c.send(1, b"{not json")
    m = c.message()
    if m.get("error", {}).get("code") != -32700:
        fail("parse error expected: %r" % m)
    c.send(2, b"\x00\x01binary")  # not the protocol: ignored, the connection goes on
    c.text({"id": 6, "method": "no/such"})
    if c.answer(6).get("error", {}).get("code") != -32601:
        fail("method not found expected")
    c.send(8, struct.pack(">H", 1000) + b"bye")
    c.expect_close(1000)


def case_protocol():
    """RFC 6455 violations: each closes that connection with 1002, others unharmed"""
    bad = [
        frame(1, b'{"id":1}', mask=False),             # clients must mask
        frame(3, b"x"),                                 # reserved opcode
        frame(1, b"{}", rsv=4),                         # RSV1 without an extension
        frame(0, b"{}"),                                # continuation with nothing to continue
        frame(9, b"x" * 126),                           # control frame over 125 bytes (*)
        frame(9, b"x", fin=False),                      # fragmented control frame (*)
        frame(1, b"{", fin=False) + frame(1, b"}"),     # a new message inside a fragmented one
        frame(1, b'"\xff\xfe"'),                        # text that is not UTF-8
        frame(8, struct.pack(">H", 999)),               # a close code no one may send
    ]
    # (*) refused by wslay's frame layer, which closes without a status code
    codes = {4: (None,), 5: (None,), 7: (1007,)}
    keep = Conn()
    keep.init()
    for i, b in enumerate(bad):
        c = Conn()
        c.s.sendall(b)
        try:
            c.expect_close(1002, codes.get(i, ()))
        except AssertionError as e:
            fail("violation %d: %s" % (i, e))
    keep.text({"id": 9, "method": "no/such"})
    keep.answer(9)


def case_huge():
    """a 1 GB frame header, and a message over --max-line-bytes in fragments: 1009, no memory"""
    before = rss_kib()
    keep = Conn()
    keep.init()
    c = Conn()
    t0 = time.monotonic()
    c.send(1, b"{" * 1000, length=1 << 30)
    c.expect_close(1009)
    if time.monotonic() - t0 > 2:
        fail("the 1 GB header took %.1f s to refuse" % (time.monotonic() - t0))
    c = Conn()
    chunk = b" " * (600 * 1024)
    c.send(1, b"{" + chunk, fin=False)
    c.send(0, chunk, fin=False)
    c.expect_close(1009)
    keep.text({"id": 3, "method": "no/such"})
    keep.answer(3)
    grown = rss_kib() - before
    if grown > 32 * 1024:
        fail("RSS grew %d KiB" % grown)
    print("huge: RSS grew %d KiB" % grown)


def case_slowloris():
    """upgrade requests dribbled in are dropped at the deadline; a real client is served meanwhile"""
    slow = []
    for _ in range(20):
        s = raw_connect()
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        slow.append(s)
    big = raw_connect()
    big.sendall(b"GET / HTTP/1.1\r\n" + b"X-Pad: " + b"a" * 20000 + b"\r\n\r\n")
    head = big.recv(4096)
    if not head.startswith(b"HTTP/1.1 400 "):
        fail("an oversized request: %r" % head[:100])
    t0 = time.monotonic()
    c = Conn()
    c.init()
    if time.monotonic() - t0 > 1.0:
        fail("a real client waited %.1f s behind the slow ones" % (time.monotonic() - t0))
    for s in slow:
        s.settimeout(10)
        try:
            s.sendall(b"X")
            while s.recv(4096):
                pass
        except (ConnectionResetError, BrokenPipeError):
            pass
    took = time.monotonic() - t0
    if took > 5:
        fail("slow upgrades held for %.1f s" % took)


def case_noread():
    """a client that never reads is dropped past its bound; another client is served meanwhile"""
    c = Conn(rcvbuf=4096)
    c.init()
    for i in range(64):
        c.text({"id": 100 + i, "method": "fs/readFile", "params": {"path": ARGS.file}})
    other = Conn()
    other.init()
    other.text({"id": 1, "method": "command/exec", "params": {"command": ["echo", "served"]}})
    if other.answer(1).get("result", {}).get("stdout") != "served\n":
        fail("the other client was not served")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(ARGS.log) as f:
            if "does not read" in f.read():
                break
        time.sleep(0.1)
    else:
        fail("the client that does not read was never dropped")
    other.text({"id": 2, "method": "no/such"})
    other.answer(2)
    c.s.close()


def case_auth():
    """--ws-auth capability-token: upstream's 401 texts; the probes need no token"""
    up = ["-H", "Upgrade: websocket", "-H", "Connection: Upgrade", "-H",
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "-H", "Sec-WebSocket-Version: 13"]
    want = [([], "missing websocket bearer token"),
            (["-H", "Authorization: Bearer not-" + ARGS.token], "invalid websocket bearer token"),
            (["-H", "Authorization: Basic " + ARGS.token], "invalid authorization header")]
    for extra, text in want:
        if curl("/", *(up + extra)) != (401, text):
            fail("%r: %r" % (extra, curl("/", *(up + extra))))
    if curl("/readyz") != (200, ""):
        fail("/readyz wants a token")
    c = Conn()  # with the token
    c.init()
    c.send(8, struct.pack(">H", 1000))
    c.expect_close(1000)


def settle(want, what):
    deadline = time.monotonic() + 5
    while fd_count() > want and time.monotonic() < deadline:
        time.sleep(0.05)
    if fd_count() > want:
        fail("%s: %d fds, %d before" % (what, fd_count(), want))


def case_churn():
    """1,000 connections opened and closed (half cleanly, half dropped): no fd growth"""
    warm = Conn()
    warm.init()
    warm.send(8, struct.pack(">H", 1000))
    warm.expect_close(1000)
    time.sleep(0.3)
    fds, rss = fd_count(), rss_kib()
    t0 = time.monotonic()
    for i in range(1000):
        c = Conn()
        c.init()
        if i % 2:
            c.send(8, struct.pack(">H", 1000))
            c.expect_close(1000)
        else:
            c.s.close()
    took = time.monotonic() - t0
    settle(fds, "after 1,000 connections")
    print("churn: 1000 connections in %.2f s, fds %d -> %d, RSS %d -> %d KiB"
          % (took, fds, fd_count(), rss, rss_kib()))


def case_idle_rss():
    """RSS per idle initialized connection (a figure, bounded loosely)"""
    before = rss_kib()
    conns = []
    for _ in range(200):
        c = Conn()
        c.init()
        conns.append(c)
    per = (rss_kib() - before) / 200.0
    print("idle: %.1f KiB RSS per initialized connection" % per)
    for c in conns:
        c.s.close()
    if per > 512:
        fail("%.1f KiB per idle connection" % per)


def children():
    with open("/proc/%d/task/%d/children" % (ARGS.pid, ARGS.pid)) as f:
        return f.read().split()


def case_exec_kill():
    """a connection's command/exec processes die with it; another connection's live on"""
    other = Conn()
    other.init()
    other.text({"id": 1, "method": "command/exec",
                "params": {"command": ["sleep", "30"], "processId": "keep"}})
    c = Conn()
    c.init()
    c.text({"id": 1, "method": "command/exec",
            "params": {"command": ["sleep", "30"], "processId": "doomed"}})
    deadline = time.monotonic() + 10
    while len(children()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    if len(children()) < 2:
        fail("the two commands never started: %r" % children())
    c.s.close()  # no close frame: the client just goes
    deadline = time.monotonic() + 2  # at once, not at the end of the 3 s grace
    while len(children()) > 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    if len(children()) != 1:
        fail("after the disconnect the daemon has children %r" % children())
    other.text({"id": 2, "method": "command/exec/terminate", "params": {"processId": "keep"}})
    other.answer(2)
    if other.answer(1).get("result", {}).get("exitCode") != 137:
        fail("the other connection's command did not run on until terminated")


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--addr", required=True)
    ap.add_argument("--pid", type=int, default=0)
    ap.add_argument("--log")
    ap.add_argument("--file")
    ap.add_argument("--proxy", help="the app-server binary: connect through its proxy")
    ap.add_argument("--token", help="the bearer token the upgrade carries")
    ARGS = ap.parse_args()
    try:
        CASES[ARGS.case]()
    except (AssertionError, OSError, ValueError) as e:
        print("ws_check %s: %s: %s" % (ARGS.case, type(e).__name__, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
