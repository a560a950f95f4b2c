"""connect(): the synchronous client on a daemon started with --listen, over ws:// and unix://
(requests, errors, notifications, command/exec, an approval answered in a turn against the
mock model, the bearer token of --ws-auth, the close handshake from either side), and the
WebSocket client itself against a scripted peer (fragments, ping, size limit, bad frames)."""
import os
import socket
import struct
import tempfile
import threading
import unittest

from app_server_client import ConnectionClosedError, RpcError, WebSocketError, connect
from app_server_client import _ws

from ._helpers import remove
from ._listen import APPROVAL_SCRIPT, Daemon, MockModel, mock_config

FULL = {"type": "dangerFullAccess"}


class SocketDaemonCases:
    """The same cases over each transport; LISTEN is the --listen argument (DIR: a scratch dir)."""

    LISTEN = ""

    def daemon(self, **kw):
        return Daemon(self, self.LISTEN, **kw)

    def conn(self, d, **kw):
        c = connect(d.url, **kw)
        self.addCleanup(c.close)
        return c

    def test_requests_errors_notifications_exec(self):
        d = self.daemon()
        c = self.conn(d, client_info={"name": "py-sock", "version": "1.0"})
        self.assertIsNone(c.process)
        self.assertEqual(c.initialize_result["platformOs"], "linux")
        self.assertIn("config", c.config_read())
        with self.assertRaises(RpcError) as cm:
            c.request("no/such", {})
        self.assertTrue(cm.exception.is_method_not_found)
        seen, both = set(), threading.Event()
        c.on("command/exec/outputDelta", lambda p: (seen.add(p["stream"]), len(seen) == 2 and both.set()))
        run = c.exec({"command": ["sh", "-c", "echo out; echo err >&2; exit 3"], "sandboxPolicy": FULL})
        chunks = list(run.chunks())
        self.assertEqual(run.result()["exitCode"], 3)
        self.assertEqual(b"".join(x.data for x in chunks if x.stream == "stdout"), b"out\n")
        self.assertEqual(b"".join(x.data for x in chunks if x.stream == "stderr"), b"err\n")
        self.assertTrue(both.wait(5))  # the user's listeners (dispatcher thread) saw them too
        big = c.command_exec({"command": ["sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' a"],
                              "disableOutputCap": True, "sandboxPolicy": FULL})
        self.assertEqual(len(big["stdout"]), 3000000)  # one message in many frames

    def test_approval_round_trip_in_a_turn(self):
        mm = MockModel(self, APPROVAL_SCRIPT)
        d = self.daemon(config=mock_config(mm.port))
        c = self.conn(d)
        asked = []

        def approve(params):
            asked.append(params)
            return {"decision": "accept"}

        c.handle("item/commandExecution/requestApproval", approve)
        resolved = threading.Event()
        c.on("serverRequest/resolved", lambda p: resolved.set())
        th = c.start_thread({"cwd": d.workspace, "approvalPolicy": "untrusted", "sandbox": "danger-full-access"})
        events = list(th.turn("touch a file"))
        self.assertEqual(events[-1].method, "turn/completed")
        self.assertEqual(events[-1].params["turn"]["status"], "completed")
        self.assertEqual(len(asked), 1)
        self.assertIn("touch a.txt", asked[0]["command"])
        self.assertTrue(resolved.wait(5))
        self.assertTrue(os.path.exists(os.path.join(d.workspace, "a.txt")))
        done = [e for e in events if e.method == "item/completed" and e.params["item"]["type"] == "commandExecution"]
        self.assertEqual(done[0].params["item"]["status"], "completed")

    def test_client_close_is_a_close_handshake(self):
        d = self.daemon()
        c = connect(d.url)
        self.assertEqual(c.close(), 0)  # the daemon answered our close with 1000
        self.assertIsNotNone(c.closed)
        with self.assertRaises(ConnectionClosedError):
            c.config_read()
        again = self.conn(d)  # the daemon serves on
        self.assertIn("config", again.config_read())

    def test_daemon_going_away_fails_pending_requests(self):
        d = self.daemon()
        c = self.conn(d)
        run = c.exec({"command": ["sleep", "30"], "sandboxPolicy": FULL})
        ended = threading.Event()
        c._watch_close(lambda e: ended.set())
        self.assertEqual(d.stop(), 0)  # SIGTERM: every connection is closed with 1001
        self.assertTrue(ended.wait(10))
        with self.assertRaises(ConnectionClosedError) as cm:
            run.result(10)
        self.assertIn("1001", str(cm.exception))

    def test_bearer_token(self):
        scratch = tempfile.mkdtemp(prefix="asc-py-tok-")
        self.addCleanup(remove, scratch)
        token_file = os.path.join(scratch, "token")
        with open(token_file, "w") as f:
            f.write("s3cret-token\n")
        d = self.daemon(args=["--ws-auth", "capability-token", "--ws-token-file", token_file])
        with self.assertRaises(ConnectionClosedError) as cm:
            connect(d.url)
        self.assertIn("401", str(cm.exception))
        self.assertIn("missing websocket bearer token", str(cm.exception))
        with self.assertRaises(ConnectionClosedError) as cm:
            connect(d.url, token="wrong")
        self.assertIn("invalid websocket bearer token", str(cm.exception))
        c = self.conn(d, token="s3cret-token")
        self.assertIn("config", c.config_read())


class WsDaemonTest(SocketDaemonCases, unittest.TestCase):
    LISTEN = "ws://127.0.0.1:0"


class UnixDaemonTest(SocketDaemonCases, unittest.TestCase):
    LISTEN = "unix://DIR/app.sock"


def server_frame(opcode, payload, fin=True):
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | opcode])
    if n < 126:
        head += bytes([n])
    elif n < 65536:
        head += bytes([126]) + struct.pack("!H", n)
    else:
        head += bytes([127]) + struct.pack("!Q", n)
    return head + payload


class FakePeer:
    """A scripted WebSocket server on a Unix socket: answers the upgrade, then runs `script`."""

    def __init__(self, testcase, script, accept=None):
        self.path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"asc-py-peer-{os.getpid()}-{id(self)}.sock")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(1)
        testcase.addCleanup(os.unlink, self.path)
        testcase.addCleanup(self.listener.close)
        self.received = []
        self.error = None

        def run():
            s, _ = self.listener.accept()
            try:
                req = b""
                while b"\r\n\r\n" not in req:
                    req += s.recv(4096)
                key = [l.split(b":", 1)[1].strip().decode() for l in req.split(b"\r\n")
                       if l.lower().startswith(b"sec-websocket-key:")][0]
                s.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          b"Sec-WebSocket-Accept: " + (accept or _ws.accept_key(key)).encode() + b"\r\n\r\n")
                script(s, self)
            except Exception as e:  # reported by the test
                self.error = e
            finally:
                s.close()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        testcase.addCleanup(self.thread.join, 5)

    def read_frame(self, s):
        """One client frame, unmasked: (opcode, payload); checks that it was masked."""
        head = self._exact(s, 2)
        n = head[1] & 0x7F
        assert head[1] & 0x80, "a client frame must be masked"
        if n == 126:
            n = struct.unpack("!H", self._exact(s, 2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self._exact(s, 8))[0]
        key = self._exact(s, 4)
        data = self._exact(s, n)
        return head[0] & 0x0F, bytes(b ^ key[i % 4] for i, b in enumerate(data))

    @staticmethod
    def _exact(s, n):
        out = b""
        while len(out) < n:
            chunk = s.recv(n - len(out))
            if not chunk:
                raise EOFError("the client went")
            out += chunk
        return out


class WebSocketClientTest(unittest.TestCase):
    def test_fragments_ping_between_them_and_close(self):
        def script(s, peer):
            s.sendall(server_frame(_ws.TEXT, b'{"a":', fin=False) + server_frame(_ws.PING, b"p1") +
                      server_frame(_ws.CONTINUATION, b'1}'))
            peer.received.append(peer.read_frame(s))  # the pong
            peer.received.append(peer.read_frame(s))  # the client's text
            s.sendall(server_frame(_ws.CLOSE, struct.pack("!H", 1000) + b"bye"))
            peer.received.append(peer.read_frame(s))  # its answer to our close

        peer = FakePeer(self, script)
        w = _ws.WebSocket(f"unix://{peer.path}")
        self.addCleanup(w.close)
        self.assertEqual(w.recv(), b'{"a":1}')
        w.send_text(b"hello")
        self.assertIsNone(w.recv())
        self.assertEqual((w.close_code, w.close_reason), (1000, "bye"))
        peer.thread.join(5)
        self.assertIsNone(peer.error)
        self.assertEqual(peer.received[0], (_ws.PONG, b"p1"))
        self.assertEqual(peer.received[1], (_ws.TEXT, b"hello"))
        self.assertEqual(peer.received[2], (_ws.CLOSE, struct.pack("!H", 1000)))

    def test_a_message_over_the_limit_is_refused_from_its_header(self):
        def script(s, peer):
            # A header announcing 1 GB: nothing of the payload is ever sent.
            s.sendall(bytes([0x81, 127]) + struct.pack("!Q", 1 << 30))
            peer.received.append(peer.read_frame(s))

        peer = FakePeer(self, script)
        w = _ws.WebSocket(f"unix://{peer.path}", max_message=1 << 20)
        self.addCleanup(w.close)
        with self.assertRaises(WebSocketError) as cm:
            w.recv()
        self.assertEqual(cm.exception.code, 1009)
        peer.thread.join(5)
        self.assertEqual(peer.received[0][0], _ws.CLOSE)
        self.assertEqual(peer.received[0][1][:2], struct.pack("!H", 1009))

    def test_masked_server_frame_and_bad_accept(self):
        def masked(s, peer):
            s.sendall(bytes([0x81, 0x80 | 1]) + b"\0\0\0\0x")
            peer.received.append(peer.read_frame(s))

        peer = FakePeer(self, masked)
        w = _ws.WebSocket(f"unix://{peer.path}")
        self.addCleanup(w.close)
        with self.assertRaises(WebSocketError) as cm:
            w.recv()
        self.assertEqual(cm.exception.code, 1002)
        peer.thread.join(5)
        bad = FakePeer(self, lambda s, p: None, accept="AAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        with self.assertRaises(ConnectionRefusedError) as cm2:
            _ws.WebSocket(f"unix://{bad.path}")
        self.assertIn("Sec-WebSocket-Accept", str(cm2.exception))

    def test_codec(self):
        r = _ws.FrameReader(100)
        frames = server_frame(_ws.TEXT, b"ab", fin=False) + server_frame(_ws.CONTINUATION, b"cd")
        evs = []
        for i in range(len(frames)):  # byte by byte
            evs += r.feed(frames[i:i + 1])
        self.assertEqual(evs, [("text", b"abcd")])
        with self.assertRaises(WebSocketError):
            _ws.FrameReader(100).feed(server_frame(_ws.CONTINUATION, b"x"))
        with self.assertRaises(WebSocketError) as cm:
            _ws.FrameReader(100).feed(server_frame(_ws.TEXT, b"\xff"))
        self.assertEqual(cm.exception.code, 1007)
        big = _ws.encode_frame(_ws.TEXT, b"x" * 70000)
        self.assertEqual(big[1], 0x80 | 127)
        with self.assertRaises(ValueError):
            _ws.Target("http://127.0.0.1:1")
