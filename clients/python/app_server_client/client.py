"""The synchronous client: a daemon spawned as a child process (spawn()), or one already
listening on ws:// or unix:// (connect(), _ws.py), spoken to from any thread.

Threads and the rules they keep:
- The reader thread reads stdout, splits lines and routes each message in arrival order:
  a response settles its request's future; a notification first feeds the internal watchers
  (exec output, turn events: quick, non-blocking queue puts), then is queued for the user's
  callbacks; a server request is queued for its handler. So an exec's or a turn's iterator sees
  every notification before the answer that ends it.
- The dispatcher thread runs the user's callbacks and server-request handlers in order, and
  always answers a server request (the handler's result, the safe default, or an error). A
  callback may call request(): the reader thread, not the dispatcher, settles answers.
- Reading stops while an exec consumer is far behind (high watermark) unless a request waits
  for its answer, so a consumer that calls request() inside its loop never stalls. Output of
  an exec nobody iterates is held until its result (pass streamStdoutStderr=False to get it in
  the result instead).
- The connection is over when stdout reached EOF and the process was reaped (or the socket's
  close handshake ended, or the socket did); then every pending request fails with
  ConnectionClosedError naming the exit status and the end of stderr (or the close status).
"""
from __future__ import annotations

import base64
import collections
import concurrent.futures
import itertools
import json
import os
import queue
import subprocess
import threading
from typing import Any, Callable, Iterator

from . import _common, _ws
from ._common import ExecChunk, Options, TurnEvent
from ._lines import LineSplitter, LineTooLongError
from .errors import ConnectionClosedError, INTERNAL_ERROR, METHOD_NOT_FOUND, OVERLOADED, RpcError, RequestTimeoutError
from .protocol import RequestMethods

_serial = itertools.count(1)


class Connection(RequestMethods):
    """A daemon and its JSON-RPC connection. Use spawn() or connect() to also complete initialize.

    With options.url (ws://HOST:PORT or unix:///PATH) it connects to a running daemon instead
    of spawning one; everything else works the same.
    """

    def __init__(self, options: Options | None = None, **kw: Any) -> None:
        self._opts = options or Options(**kw)
        self._proc: subprocess.Popen[bytes] | None = None
        self._ws: _ws.WebSocket | None = None
        if self._opts.url is not None:
            try:
                self._ws = _ws.WebSocket(self._opts.url, self._opts.token, self._opts.connect_timeout,
                                         self._opts.max_line_bytes)
            except (OSError, ValueError) as e:
                raise ConnectionClosedError(f"cannot connect to {self._opts.url}: {e}") from e
        else:
            cmd = self._opts.command()
            stderr = {"pipe": subprocess.PIPE, "inherit": None, "ignore": subprocess.DEVNULL}[self._opts.stderr]
            try:
                self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                              env=self._opts.environment(), cwd=self._opts.cwd, bufsize=0)
            except OSError as e:
                raise ConnectionClosedError(f"cannot run app-server ({cmd[0]}): {e.strerror or e}") from e
        self.initialize_result: dict[str, Any] | None = None
        self.on_error: Callable[[BaseException], None] = lambda e: None
        self._cond = threading.Condition()  # guards everything below; wakes a paused reader
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[str, concurrent.futures.Future[Any]]] = {}
        self._listeners: dict[str, list[Callable[[Any], None]]] = {}
        self._any: list[Callable[[str, Any], None]] = []
        self._watchers: list[Callable[[str, Any], None]] = []
        self._close_watchers: list[Callable[[BaseException], None]] = []
        self._handlers: dict[str, Callable[[Any], Any]] = {}
        self._pauses = 0
        self._closing = False
        self._closed: ConnectionClosedError | None = None
        self._write_lock = threading.Lock()
        self._stderr_tail: collections.deque[bytes] = collections.deque()
        self._stderr_size = 0
        self._dispatch: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self._stderr_thread = None
        if self._proc is not None and self._proc.stderr is not None:
            self._stderr_thread = threading.Thread(target=self._stderr_loop, daemon=True)
            self._stderr_thread.start()
        self._dispatcher = threading.Thread(target=self._dispatch_loop, daemon=True)
        self._dispatcher.start()
        loop = self._read_loop if self._ws is None else self._read_socket_loop
        self._reader = threading.Thread(target=loop, daemon=True)
        self._reader.start()

    # --- the public API -----------------------------------------------------------------

    def initialize(self) -> dict[str, Any]:
        """Send initialize and the initialized notification (spawn() does this)."""
        self.initialize_result = self.request("initialize", self._opts.initialize_params())
        self.notify("initialized")
        return self.initialize_result

    def request(self, method: str, params: Any = None, timeout: float | None = None) -> Any:
        """Send a request and wait for its result; -32001 is retried with backoff."""
        if threading.current_thread() is self._reader:
            raise RuntimeError("request() from the reader thread would wait forever")
        fut = self.call(method, params)
        try:
            return fut.result(timeout)
        except concurrent.futures.TimeoutError:
            raise RequestTimeoutError(method, timeout or 0) from None

    def call(self, method: str, params: Any = None) -> concurrent.futures.Future[Any]:
        """Send a request without waiting: a future of its result (-32001 retried)."""
        outer: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._attempt(outer, method, {} if params is None else params, 0)
        return outer

    def notify(self, method: str, params: Any = None) -> None:
        self._write({"method": method} if params is None else {"method": method, "params": params})

    def on(self, method: str, callback: Callable[[Any], None]) -> Callable[[], None]:
        """Call callback(params) for each notification `method` (on the dispatcher thread)."""
        with self._cond:
            self._listeners.setdefault(method, []).append(callback)
        return lambda: self._remove(self._listeners.get(method, []), callback)

    def on_any(self, callback: Callable[[str, Any], None]) -> Callable[[], None]:
        with self._cond:
            self._any.append(callback)
        return lambda: self._remove(self._any, callback)

    def handle(self, method: str, handler: Callable[[Any], Any]) -> None:
        """Answer server requests `method` with handler(params); it replaces the safe default."""
        with self._cond:
            self._handlers[method] = handler

    def exec(self, params: dict[str, Any]) -> "ExecProcess":
        return ExecProcess(self, params)

    def start_thread(self, params: dict[str, Any] | None = None) -> "Thread":
        r = self.request("thread/start", params or {})
        return Thread(self, r["thread"], r)

    def resume_thread(self, thread_id: str, params: dict[str, Any] | None = None) -> "Thread":
        r = self.request("thread/resume", {**(params or {}), "threadId": thread_id})
        return Thread(self, r["thread"], r)

    @property
    def closed(self) -> ConnectionClosedError | None:
        return self._closed

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The spawned daemon (None when connected to a listening one)."""
        return self._proc

    @property
    def stderr(self) -> str:
        with self._cond:
            return b"".join(self._stderr_tail).decode("utf-8", "replace")

    def close(self, timeout: float | None = None) -> int:
        """Close stdin, wait for the daemon to exit, kill it after the deadline; its status.

        Connected to a listening daemon: the close handshake (1000), the socket shut after the
        deadline; 0 when the daemon answered with 1000, else its close status (1006: none).
        """
        timeout = self._opts.shutdown_timeout if timeout is None else timeout
        with self._cond:
            self._closing = True  # read to the end, whoever paused reading
            self._cond.notify_all()
        if self._ws is not None:
            return self._close_socket(timeout)
        assert self._proc is not None
        with self._write_lock:
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.close()
            except OSError:
                pass
        try:
            self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._proc.terminate()
            try:
                self._proc.wait(1.0)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._reader.join()
        if threading.current_thread() is not self._dispatcher:
            self._dispatcher.join()
        return self._proc.returncode

    def _close_socket(self, timeout: float) -> int:
        assert self._ws is not None
        self._ws.send_close(1000)
        self._reader.join(timeout)
        if self._reader.is_alive():
            self._ws.shutdown()  # the daemon did not answer our close: recv() ends now
            self._reader.join()
        if threading.current_thread() is not self._dispatcher:
            self._dispatcher.join()
        self._ws.close()
        code = self._ws.close_code
        return 0 if code == 1000 else (code or 1006)

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- internals used by ExecProcess and Turn ------------------------------------------

    def _watch(self, fn: Callable[[str, Any], None]) -> Callable[[], None]:
        """fn(method, params) for every notification, on the reader thread: must not block."""
        with self._cond:
            self._watchers.append(fn)
        return lambda: self._remove(self._watchers, fn)

    def _watch_close(self, fn: Callable[[BaseException], None]) -> Callable[[], None]:
        with self._cond:
            if self._closed is None:
                self._close_watchers.append(fn)
                return lambda: self._remove(self._close_watchers, fn)
        fn(self._closed)
        return lambda: None

    def _pause_reading(self) -> None:
        with self._cond:
            self._pauses += 1

    def _resume_reading(self) -> None:
        with self._cond:
            self._pauses = max(0, self._pauses - 1)
            self._cond.notify_all()

    # --- requests -------------------------------------------------------------------------

    def _attempt(self, outer: concurrent.futures.Future[Any], method: str, params: Any, attempt: int) -> None:
        inner = self._send(method, params)

        def done(f: concurrent.futures.Future[Any]) -> None:
            err = f.exception()
            retry = self._opts.retry
            if isinstance(err, RpcError) and err.code == OVERLOADED and retry is not None and attempt < retry.retries:
                t = threading.Timer(retry.delay(attempt), self._attempt, (outer, method, params, attempt + 1))
                t.daemon = True
                t.start()
            elif err is not None:
                outer.set_exception(err)
            else:
                outer.set_result(f.result())

        inner.add_done_callback(done)

    def _send(self, method: str, params: Any) -> concurrent.futures.Future[Any]:
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
        with self._cond:
            if self._closed is not None:
                fut.set_exception(self._closed)
                return fut
            req_id = next(self._ids)
            self._pending[req_id] = (method, fut)
            self._cond.notify_all()  # a paused reader reads again while an answer is due
        try:
            self._write({"id": req_id, "method": method, "params": params})
        except ConnectionClosedError as e:
            with self._cond:
                self._pending.pop(req_id, None)
            if not fut.done():
                fut.set_exception(e)
        return fut

    def _write(self, msg: Any) -> None:
        text = json.dumps(msg, ensure_ascii=False, separators=(",", ":"))
        with self._write_lock:
            if self._closed is not None:
                raise self._closed
            if self._ws is not None:  # one message per text frame, no newline
                try:
                    self._ws.send_text(text.encode())
                except OSError:
                    raise self._closed or ConnectionClosedError(f"the connection to {self._opts.url} is closed") from None
                return
            data = (text + "\n").encode()
            assert self._proc is not None
            try:
                assert self._proc.stdin is not None
                view = memoryview(data)
                while view:
                    n = self._proc.stdin.write(view)
                    view = view[n or 0:]
            except (OSError, ValueError):
                raise self._closed or ConnectionClosedError("app-server closed its stdin") from None

    # --- the reader thread ----------------------------------------------------------------

    def _read_socket_loop(self) -> None:
        """The reader over a WebSocket: one message per text frame, the rules of _read_loop."""
        assert self._ws is not None
        try:
            while True:
                with self._cond:
                    while self._pauses > 0 and not self._pending and not self._closing:
                        self._cond.wait()
                msg = self._ws.recv()
                if msg is None:
                    break
                self._on_line(msg)
        except OSError as e:  # WebSocketError included: the socket is shut already
            self._report(e)
        self._finish()

    def _read_loop(self) -> None:
        splitter = LineSplitter(self._opts.max_line_bytes)
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        try:
            while True:
                with self._cond:
                    while self._pauses > 0 and not self._pending and not self._closing:
                        self._cond.wait()
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                for line in splitter.push(chunk):
                    self._on_line(line)
            last = splitter.end()
            if last is not None:
                self._on_line(last)
        except LineTooLongError as e:
            self._report(e)
            self._proc.kill()
        except OSError as e:
            self._report(e)
        self._proc.stdout.close()
        self._proc.wait()
        if self._stderr_thread is not None:
            self._stderr_thread.join(1.0)
        self._finish()

    def _on_line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            msg = json.loads(line)
        except ValueError:
            self._report(ValueError(f"unparsable line from app-server: {line[:200]!r}"))
            return
        if not isinstance(msg, dict):
            return
        method = msg.get("method")
        if isinstance(method, str) and msg.get("id") is not None:
            self._dispatch.put(("request", msg["id"], method, msg.get("params")))
        elif isinstance(method, str):
            with self._cond:
                watchers = list(self._watchers)
            for fn in watchers:
                fn(method, msg.get("params"))
            self._dispatch.put(("notify", method, msg.get("params")))
        elif "id" in msg:
            self._on_response(msg)

    def _on_response(self, msg: dict[str, Any]) -> None:
        with self._cond:
            entry = self._pending.pop(msg["id"], None) if isinstance(msg["id"], int) else None
        if entry is None:
            return
        method, fut = entry
        err = msg.get("error")
        if err is not None:
            fut.set_exception(RpcError(method, int(err.get("code", 0)), str(err.get("message")), err.get("data")))
        else:
            fut.set_result(msg.get("result"))

    def _finish(self) -> None:
        if self._ws is not None:
            err = _common.socket_closed_error(self._ws.url, self._ws.close_code, self._ws.close_reason)
        else:
            assert self._proc is not None
            err = _common.closed_error(self._proc.returncode, b"".join(self._stderr_tail), None)
        with self._cond:
            self._closed = err
            pending = list(self._pending.values())
            self._pending.clear()
            closers = list(self._close_watchers)
            self._close_watchers.clear()
            self._cond.notify_all()
        for _, fut in pending:
            if not fut.done():
                fut.set_exception(err)
        for fn in closers:
            fn(err)
        self._dispatch.put(None)

    def _stderr_loop(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        fd = self._proc.stderr.fileno()
        while chunk := os.read(fd, 1 << 14):
            with self._cond:
                self._stderr_tail.append(chunk)
                self._stderr_size += len(chunk)
                while self._stderr_size - len(self._stderr_tail[0]) >= _common.STDERR_KEEP:
                    self._stderr_size -= len(self._stderr_tail.popleft())
        self._proc.stderr.close()

    # --- the dispatcher thread ------------------------------------------------------------

    def _dispatch_loop(self) -> None:
        while (item := self._dispatch.get()) is not None:
            if item[0] == "notify":
                self._run_listeners(item[1], item[2])
            else:
                self._answer(item[1], item[2], item[3])

    def _run_listeners(self, method: str, params: Any) -> None:
        with self._cond:
            cbs = list(self._listeners.get(method, []))
            anys = list(self._any)
        for cb in cbs:
            self._guard(cb, params)
        for cb2 in anys:
            self._guard(cb2, method, params)

    def _answer(self, req_id: Any, method: str, params: Any) -> None:
        with self._cond:
            handler = self._handlers.get(method)
        try:
            if handler is not None:
                result = handler(params)
                reply = {"id": req_id, "result": {} if result is None else result}
            else:
                answer = _common.default_server_answer(method)
                reply = ({"id": req_id, "result": answer} if answer is not None
                         else _common.error_reply(req_id, METHOD_NOT_FOUND, f"no handler for {method}"))
        except Exception as e:  # the handler failed: the daemon gets an error answer
            code = e.code if isinstance(e, RpcError) else INTERNAL_ERROR
            reply = _common.error_reply(req_id, code, str(e))
        try:
            self._write(reply)
        except ConnectionClosedError:
            pass

    def _guard(self, fn: Callable[..., Any], *args: Any) -> None:
        try:
            fn(*args)
        except Exception as e:
            self._report(e)

    def _report(self, err: BaseException) -> None:
        try:
            self.on_error(err)
        except Exception:
            pass

    def _remove(self, lst: list[Any], item: Any) -> None:
        with self._cond:
            if item in lst:
                lst.remove(item)


def spawn(options: Options | None = None, **kw: Any) -> Connection:
    """Start a daemon and complete the initialize handshake."""
    conn = Connection(options, **kw)
    try:
        conn.initialize()
    except BaseException:
        conn.close(1.0)
        raise
    return conn


def connect(url: str, token: str | None = None, **kw: Any) -> Connection:
    """Connect to a daemon started with --listen (ws://HOST:PORT or unix:///PATH) and initialize.

    token: the bearer token its --ws-auth asks for. Other keywords are Options' (client_info,
    capabilities, retry, max_line_bytes, shutdown_timeout, connect_timeout).
    """
    return spawn(url=url, token=token, **kw)


class _Queue:
    """Items for one consumer thread, optionally with watermarks on their size."""

    def __init__(self, conn: Connection | None = None) -> None:
        self._conn = conn
        self._cond = threading.Condition()
        self._items: collections.deque[Any] = collections.deque()
        self._held = 0
        self._paused = False
        self._done = False
        self._error: BaseException | None = None
        self.iterating = False

    def put(self, item: Any, size: int = 0) -> None:
        with self._cond:
            if self._done:
                return
            self._items.append((item, size))
            self._held += size
            pause = self._conn is not None and self.iterating and not self._paused and self._held > _common.EXEC_HIGH_WATER
            self._paused |= pause
            self._cond.notify()
        if pause and self._conn is not None:
            self._conn._pause_reading()

    def end(self, error: BaseException | None = None) -> None:
        with self._cond:
            if not self._done:
                self._done, self._error = True, error
            self._cond.notify_all()

    def __iter__(self) -> Iterator[Any]:
        while True:
            with self._cond:
                while not self._items and not self._done:
                    self._cond.wait()
                if not self._items:
                    if self._error is not None:
                        raise self._error
                    return
                item, size = self._items.popleft()
                self._held -= size
                resume = self._paused and self._held <= _common.EXEC_LOW_WATER
                self._paused &= not resume
            if resume and self._conn is not None:
                self._conn._resume_reading()
            yield item


class ExecProcess:
    """command/exec: iterate it for output bytes (or chunks() for ExecChunk), then result()."""

    def __init__(self, conn: Connection, params: dict[str, Any]) -> None:
        self._conn = conn
        self.process_id: str = params.get("processId") or f"exec-{os.getpid()}-{next(_serial)}"
        full = {"streamStdoutStderr": True, **params, "processId": self.process_id}
        self._queue = _Queue(conn)
        self._taken = False
        unwatch = conn._watch(self._on_event)
        self._future = conn.call("command/exec", full)

        def done(f: concurrent.futures.Future[Any]) -> None:
            unwatch()
            self._queue.end(f.exception())

        self._future.add_done_callback(done)

    def _on_event(self, method: str, params: Any) -> None:
        if method == "command/exec/outputDelta" and isinstance(params, dict) and params.get("processId") == self.process_id:
            data = base64.b64decode(params.get("deltaBase64", ""))
            self._queue.put(ExecChunk(params.get("stream", "stdout"), data, bool(params.get("capReached"))), len(data))

    def chunks(self) -> Iterator[ExecChunk]:
        if self._taken:
            raise RuntimeError("the output of an exec can be iterated once")
        self._taken = True
        self._queue.iterating = True
        return iter(self._queue)

    def __iter__(self) -> Iterator[bytes]:
        return (c.data for c in self.chunks())

    def result(self, timeout: float | None = None) -> dict[str, Any]:
        """The answer: exitCode, and stdout/stderr when they were not streamed."""
        try:
            return self._future.result(timeout)
        except concurrent.futures.TimeoutError:
            raise RequestTimeoutError("command/exec", timeout or 0) from None

    def write(self, data: bytes | str) -> None:
        raw = data.encode() if isinstance(data, str) else bytes(data)
        self._conn.command_exec_write({"processId": self.process_id, "deltaBase64": base64.b64encode(raw).decode()})

    def close_stdin(self) -> None:
        self._conn.command_exec_write({"processId": self.process_id, "closeStdin": True})

    def resize(self, rows: int, cols: int) -> None:
        self._conn.command_exec_resize({"processId": self.process_id, "size": {"rows": rows, "cols": cols}})

    def terminate(self) -> None:
        self._conn.command_exec_terminate({"processId": self.process_id})


class Turn:
    """A turn: iterate it for its notifications (TurnEvent); it ends after turn/completed."""

    def __init__(self, thread: "Thread", items: list[dict[str, Any]], params: dict[str, Any]) -> None:
        self._thread = thread
        self._lock = threading.Lock()
        self._queue = _Queue()
        self._early: list[TurnEvent] | None = []
        self.turn_id: str | None = None
        conn = thread.conn
        self._unwatch = conn._watch(self._on_event)
        self._unclose = conn._watch_close(lambda e: self._stop(e))
        self._future = conn.call("turn/start", {**params, "threadId": thread.id, "input": items})
        self._future.add_done_callback(self._on_started)

    def _on_started(self, f: concurrent.futures.Future[Any]) -> None:
        if f.exception() is not None:
            self._stop(f.exception())
            return
        # Under the lock, so held events go out before any the reader thread offers next.
        with self._lock:
            self.turn_id = f.result()["turn"]["id"]
            held, self._early = self._early or [], None
            for ev in held:
                self._offer(ev)

    def _on_event(self, method: str, params: Any) -> None:
        if not isinstance(params, dict) or params.get("threadId") != self._thread.id:
            return
        with self._lock:
            if self._early is not None:
                self._early.append(TurnEvent(method, params))
            else:
                self._offer(TurnEvent(method, params))

    def _offer(self, ev: TurnEvent) -> None:
        tid = _common.turn_id_of(ev.params)
        if tid is not None and tid != self.turn_id:
            return
        self._queue.put(ev)
        if ev.method == "turn/completed":
            self._stop(None)

    def _stop(self, err: BaseException | None) -> None:
        self._unwatch()
        unclose = getattr(self, "_unclose", None)
        if unclose is not None:
            unclose()
        self._queue.end(err)

    def started(self, timeout: float | None = None) -> dict[str, Any]:
        """The answer to turn/start: the turn (status inProgress)."""
        return self._future.result(timeout)["turn"]

    def interrupt(self) -> None:
        self._thread.conn.request("turn/interrupt", {"threadId": self._thread.id, "turnId": self.started()["id"]})

    def __iter__(self) -> Iterator[TurnEvent]:
        return iter(self._queue)

    def completed(self) -> dict[str, Any]:
        """Drain the turn; the turn of its turn/completed."""
        last = None
        for ev in self:
            if ev.method == "turn/completed":
                last = ev.params["turn"]
        if last is None:
            raise RuntimeError("the turn ended without turn/completed")
        return last


class Thread:
    def __init__(self, conn: Connection, info: dict[str, Any], response: dict[str, Any]) -> None:
        self.conn = conn
        self.info = info
        self.response = response

    @property
    def id(self) -> str:
        return self.info["id"]

    def turn(self, input: str | list[dict[str, Any]], params: dict[str, Any] | None = None) -> Turn:
        return Turn(self, _common.user_input(input), params or {})
