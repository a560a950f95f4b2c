"""What the soaks share: a daemon on stdio and the numbers read about it from /proc.

A `Conn` spawns `build/app-server` (stdin/stdout pipes, stderr to a log file), writes whole
lines under a lock, and reads on a thread of its own: answers are matched to their request by
id (a second answer for one id, or an answer for an id never sent, is recorded as an error,
never dropped), server requests go to `on_server_request` (which answers them), notifications
to `on_notification`. Python 3.11 standard library only.
"""
import json
import os
import random
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_BIN = os.path.join(ROOT, "build", "app-server")


class Pending:
    """One request in flight: its answer, when it comes, and an optional callback."""

    __slots__ = ("method", "event", "answer", "callback", "sent_at")

    def __init__(self, method, callback):
        self.method = method
        self.event = threading.Event()
        self.answer = None
        self.callback = callback
        self.sent_at = time.monotonic()


class Conn:
    """A daemon on stdio with a reader thread; see the module comment."""

    def __init__(self, binary=DEFAULT_BIN, home=None, args=(), env=None, stderr_path=None,
                 on_notification=None, on_server_request=None):
        e = dict(os.environ)
        e.pop("APP_SERVER_LOG", None)
        if home is not None:
            e["CODEX_HOME"] = home
        if env:
            e.update(env)
        self.stderr_file = open(stderr_path or os.devnull, "ab")
        self.p = subprocess.Popen([binary, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.stderr_file, env=e, bufsize=0)
        self.pid = self.p.pid
        self.on_notification = on_notification
        self.on_server_request = on_server_request
        self.wlock = threading.Lock()
        self.lock = threading.Lock()
        self.pending = {}       # key(id) -> Pending
        self.answered = {}      # key(id) -> number of answers seen (ids we sent)
        self.errors = []        # protocol errors seen by the reader (strings)
        self.null_id_answers = 0
        self.unknown_answers = []  # answers whose id we never sent
        self.lines_in = 0
        self.next_id = 1
        self.wants_wait = True  # False: answers are only counted (callbacks still run)
        self.eof = threading.Event()
        self.reader = threading.Thread(target=self._read_loop, daemon=True)
        self.reader.start()

    # -- writing --------------------------------------------------------------------------

    def send_raw(self, data):
        """Write bytes as they are (the caller adds the newline)."""
        with self.wlock:
            self.p.stdin.write(data)

    def send(self, obj):
        self.send_raw(json.dumps(obj, separators=(",", ":")).encode() + b"\n")

    def request(self, method, params=None, callback=None, rid=None):
        """Send a request; returns its id. callback(answer) runs on the reader thread."""
        with self.lock:
            if rid is None:
                rid = self.next_id
                self.next_id += 1
            self.pending[_key(rid)] = Pending(method, callback)
            self.answered.setdefault(_key(rid), 0)
        msg = {"id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return rid

    def expect(self, rid, method="?", callback=None):
        """Register an id the caller writes itself (send_raw) so its answer is matched."""
        with self.lock:
            self.pending[_key(rid)] = Pending(method, callback)
            self.answered.setdefault(_key(rid), 0)

    def wait(self, rid, timeout=30.0):
        """The answer of a request (dict); TimeoutError when none comes in time."""
        with self.lock:
            pend = self.pending.get(_key(rid))
            if pend is None:
                raise KeyError("no such request %r" % (rid,))
        if not pend.event.wait(timeout):
            raise TimeoutError("no answer to %s (id %r) within %ss" % (pend.method, rid, timeout))
        with self.lock:
            self.pending.pop(_key(rid), None)
        return pend.answer

    def call(self, method, params=None, timeout=30.0):
        return self.wait(self.request(method, params), timeout)

    def result(self, method, params=None, timeout=30.0):
        """call() that insists on a result."""
        a = self.call(method, params, timeout)
        if "result" not in a:
            raise RuntimeError("%s failed: %s" % (method, json.dumps(a.get("error"))))
        return a["result"]

    def initialize(self, name="soak"):
        self.result("initialize", {"clientInfo": {"name": name, "version": "1.0"}})
        self.send({"method": "initialized"})

    def reply(self, rid, result=None, error=None):
        if error is not None:
            self.send({"id": rid, "error": error})
        else:
            self.send({"id": rid, "result": result})

    # -- reading --------------------------------------------------------------------------

    def _read_loop(self):
        fd = self.p.stdout.fileno()
        buf = b""
        try:
            while True:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                buf += chunk
                if b"\n" not in chunk:
                    continue
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    self._dispatch(line)
        except OSError as e:
            self.errors.append("read: %s" % e)
        if buf:
            self.errors.append("stdout ended inside a line (%d bytes)" % len(buf))
        self.eof.set()

    def _dispatch(self, line):
        self.lines_in += 1
        try:
            msg = json.loads(line)
        except ValueError as e:
            self.errors.append("unparsable output line (%s): %.200r" % (e, line))
            return
        if not isinstance(msg, dict):
            self.errors.append("output line not an object: %.200r" % line)
            return
        if "method" in msg:
            if "id" in msg:
                if self.on_server_request is not None:
                    self.on_server_request(self, msg)
                else:
                    self.reply(msg["id"], error={"code": -32601, "message": "soak: no handler"})
            elif self.on_notification is not None:
                self.on_notification(self, msg)
            return
        rid = msg.get("id")
        if rid is None:
            self.null_id_answers += 1
            return
        k = _key(rid)
        with self.lock:
            n = self.answered.get(k)
            if n is None:
                self.unknown_answers.append(msg)
                return
            self.answered[k] = n + 1
            if n > 0:
                self.errors.append("second answer for id %r: %.200s" % (rid, line))
                return
            # kept until wait() takes it (or forget() when nobody waits)
            pend = self.pending[k] if self.wants_wait else self.pending.pop(k)
        pend.answer = msg
        if pend.callback is not None:
            try:
                pend.callback(msg)
            except Exception as e:  # a soak's check failing must not kill the reader
                self.errors.append("callback for %r raised %r" % (rid, e))
        pend.event.set()

    # -- the end --------------------------------------------------------------------------

    def unanswered(self):
        with self.lock:
            return [(k, p.method) for k, p in self.pending.items() if p.answer is None]

    def close(self, timeout=20.0):
        """Close stdin and wait for the exit; returns the exit status (None on timeout)."""
        try:
            with self.wlock:
                self.p.stdin.close()
        except OSError:
            pass
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self.eof.wait(5)
        self.stderr_file.close()
        return rc

    def kill9(self):
        """SIGKILL, then reap it; the reader sees EOF."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.p.wait()
        try:
            self.p.stdin.close()
        except OSError:
            pass
        self.eof.wait(5)
        self.stderr_file.close()


def _key(rid):
    """Ids 7 and "7" are different ids."""
    return (type(rid).__name__, rid)


# -- /proc -------------------------------------------------------------------------------

def children(pid):
    """[(child pid, state letter)] of the processes whose parent is pid."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d, "rb") as f:
                st = f.read().decode("latin-1")
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses
        rest = st[st.rindex(")") + 2:].split()
        if int(rest[1]) == pid:
            out.append((int(d), rest[0]))
    return out


def in_cgroups_of(pids):
    """Processes in the per-command cgroups of daemons with these pids (app-server-<pid>)."""
    keys = [b"/app-server-%d/" % p for p in pids]
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/cgroup" % d, "rb") as f:
                    text = f.read()
            except OSError:
                continue
            if any(k in text for k in keys):
                out.append(int(d))
    return out


def state(pid):
    """A process's state letter ('' when gone)."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            st = f.read().decode("latin-1")
    except OSError:
        return ""
    return st[st.rindex(")") + 2:].split()[0]


def describe(pid):
    """'pid state ppid cmdline' of a process, or 'pid gone'."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            st = f.read().decode("latin-1")
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode("latin-1").strip()
    except OSError:
        return "%d gone" % pid
    rest = st[st.rindex(")") + 2:].split()
    return "%d %s ppid %s %s" % (pid, rest[0], rest[1], cmd or st[st.index("("):st.rindex(")") + 1])


def zombies(pid):
    return sum(1 for _, s in children(pid) if s == "Z")


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def fds(pid):
    """{fd: link target} of a process."""
    out = {}
    for n in os.listdir("/proc/%d/fd" % pid):
        try:
            out[int(n)] = os.readlink("/proc/%d/fd/%s" % (pid, n))
        except OSError:
            pass
    return out


def fd_kinds(pid):
    """{kind: count} of a process's fds: targets with numbers (pipe inodes, cgroup serials)
    folded, so two moments can be compared by what is open rather than by fd number."""
    out = {}
    for t in fds(pid).values():
        k = re.sub(r"\[\d+\]", "[N]", re.sub(r"/c\d+/", "/cN/", t))
        out[k] = out.get(k, 0) + 1
    return out


CGROUP_POOL = 4  # sandbox/cgroup/cgroup.c: empty per-command cgroups kept for reuse, 3 fds each


def fd_diff(base, after, sockets=False):
    """Compare two fd_kinds(): [] when equal, except that the fds of the cgroup pool
    (bounded at CGROUP_POOL per kind) may differ, and with sockets=True the number of
    sockets (libcurl's connection cache); else [(kind, base, after), ...]."""
    out = []
    for k in sorted(set(base) | set(after)):
        b, a = base.get(k, 0), after.get(k, 0)
        if b != a and not ("/cN/" in k and a <= CGROUP_POOL) and not (
                sockets and k.startswith("socket:")):
            out.append((k, b, a))
    return out


def status_kib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def rss_kib(pid):
    return status_kib(pid, "VmRSS")


def threads(pid):
    return status_kib(pid, "Threads")


def snapshot(pid):
    """The numbers the soaks compare: zombies, fds, RSS (KiB), threads, children."""
    kids = children(pid)
    return {"zombies": sum(1 for _, s in kids if s == "Z"), "children": len(kids),
            "fds": fd_count(pid), "rss_kib": rss_kib(pid), "threads": threads(pid)}


def settle(pid, quiet_s=1.0, timeout=30.0):
    """Wait until the daemon has no children left (or timeout), then quiet_s more."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and children(pid):
        time.sleep(0.05)
    time.sleep(quiet_s)


def machine():
    """One line about the machine's conditions now."""
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    mem = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, v = line.split(":", 1)
            mem[k] = int(v.split()[0])
    return "%d cores, load %s, MemAvailable %d MiB" % (
        os.cpu_count(), load, mem.get("MemAvailable", 0) // 1024)


def fmt_snap(s):
    return "zombies %d, children %d, fds %d, RSS %.1f MiB, threads %d" % (
        s["zombies"], s["children"], s["fds"], s["rss_kib"] / 1024, s["threads"])


def sanitizer_reports(*paths):
    """Lines of ASan/UBSan/LSan reports in log files (a --bin build/san/app-server run)."""
    out = []
    for path in paths:
        try:
            with open(path, "rb") as f:
                for line in f:
                    if b"Sanitizer" in line or b"runtime error:" in line:
                        out.append("%s: %s" % (os.path.basename(path),
                                               line.decode("utf-8", "replace").strip()))
        except OSError:
            pass
    return out


# Every soak's own options (each takes a value): under `make soak SOAK_ARGS=...` a soak
# ignores the options of the other two.
SOAK_OPTIONS = {"--count", "--concurrency", "--warmup", "--at-eof", "--turns", "--threads", "--rounds",
                "--kills", "--tear", "--mb", "--max-line-bytes", "--huge-share", "--rss-slack-kib"}


def parse_args(ap, name):
    """ap.parse_args() with the options every soak has (--seed, --bin), except that another
    soak's options (SOAK_OPTIONS) are skipped. Returns (args, seed, rng, tmp): the seed (given
    or drawn), a random.Random on it, and a new temporary folder "<name>.XXXX"."""
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--bin", default=DEFAULT_BIN)
    a, rest = ap.parse_known_args()
    i = 0
    while i < len(rest):
        opt = rest[i].split("=", 1)[0]
        if opt not in SOAK_OPTIONS:
            ap.error("unrecognized argument: %s" % rest[i])
        i += 1 if "=" in rest[i] else 2
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    return a, seed, random.Random(seed), tempfile.mkdtemp(prefix=name + ".")


class Checks:
    """Named pass/fail lines; exit status 1 when any failed."""

    def __init__(self):
        self.failed = []

    def check(self, name, ok, detail=""):
        print("%s  %s%s" % ("ok  " if ok else "FAIL", name, (": " + detail) if detail else ""),
              flush=True)
        if not ok:
            self.failed.append(name)
        return ok

    def status(self):
        return 1 if self.failed else 0


def finish(ch, tmp, *logs):
    """The end of every soak: no sanitizer report in the logs, the scratch folder removed
    when everything passed (kept, and named, otherwise); the exit status."""
    san = sanitizer_reports(*(os.path.join(tmp, name) for name in logs))
    ch.check("no sanitizer reports on the daemon's stderr", not san, "; ".join(san[:3]))
    if not ch.failed:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print("kept %s" % tmp)
    return ch.status()
