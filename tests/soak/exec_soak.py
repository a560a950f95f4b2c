#!/usr/bin/env python3
"""command/exec soak: N commands of mixed modes, pipelined, then the daemon's leftovers.

Modes (by weight): buffered (exit codes, both streams), streaming (processId, outputDelta,
stdin written and closed), PTY (tty, resize, write), terminate (137), timeout (small
timeoutMs, 124), sandboxed readOnly (a write into the workspace must fail) and workspaceWrite
(a write into the workspace must work), background (a setsid'd grandchild, which must not
outlive its command). At most --concurrency commands run at once. At the end, --at-eof
commands of every kind are still running when stdin closes: each must be answered (137), the
daemon must exit 0, and no process of theirs may be left.

Measured on the daemon from /proc: zombie children, fd count, RSS. Baseline = after a
warm-up of --warmup commands and a settle (no children, 1 s quiet); after = the same after the
run. Pass: every request answered exactly once with the expected outcome, 0 zombies, fds equal
to the baseline, RSS <= baseline + --rss-slack-kib (2 MiB by default).

usage: tests/soak/exec_soak.py [--count 10000] [--concurrency 16] [--seed S] [--bin PATH]
"""
import argparse
import base64
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soaklib  # noqa: E402

MODES = [("buffered", 28), ("streaming", 20), ("pty", 15), ("terminate", 10), ("timeout", 10),
         ("readOnly", 7.5), ("workspaceWrite", 7.5), ("background", 2)]
WAIT_S = 60.0
FULL = {"type": "dangerFullAccess"}


class Soak:
    def __init__(self, conn, ws):
        self.c = conn
        self.ws = ws
        self.lock = threading.Lock()
        self.deltas = {}    # processId -> {"stdout": bytearray, "stderr": bytearray}
        self.done = {m: 0 for m, _ in MODES}
        self.fail = {m: [] for m, _ in MODES}
        self.requests = 0

    def on_notification(self, conn, msg):
        if msg.get("method") != "command/exec/outputDelta":
            return
        p = msg["params"]
        with self.lock:
            d = self.deltas.get(p["processId"])
            if d is None:
                d = self.deltas[p["processId"]] = {"stdout": bytearray(), "stderr": bytearray()}
            d[p["stream"]] += base64.b64decode(p["deltaBase64"])

    def call(self, method, params):
        with self.lock:
            self.requests += 1
        return self.c.wait(self.c.request(method, params), WAIT_S)

    def take(self, pid):
        with self.lock:
            d = self.deltas.pop(pid, None)
        return d or {"stdout": bytearray(), "stderr": bytearray()}

    def run(self, n, mode):
        try:
            err = getattr(self, "m_" + mode)(n)
        except Exception as e:  # a timeout: an unanswered request
            err = "%s: %s" % (type(e).__name__, e)
        with self.lock:
            if err:
                self.fail[mode].append("#%d %s" % (n, err))
            else:
                self.done[mode] += 1

    # -- the modes: each returns None or what went wrong ------------------------------------

    def m_buffered(self, n):
        a = self.call("command/exec", {
            "command": ["sh", "-c", "echo out-$0; echo err >&2; exit $1", str(n), str(n % 7)],
            "sandboxPolicy": FULL})
        r = a.get("result")
        want = {"exitCode": n % 7, "stdout": "out-%d\n" % n, "stderr": "err\n"}
        return None if r == want else "got %s" % a

    def m_streaming(self, n):
        pid = "s-%d" % n
        rid = self.c.request("command/exec", {
            "command": ["sh", "-c", "echo start; read x; echo got:$x; echo e >&2"],
            "processId": pid, "streamStdoutStderr": True, "streamStdin": True,
            "sandboxPolicy": FULL})
        w = self.call("command/exec/write", {
            "processId": pid, "deltaBase64": base64.b64encode(b"hi-%d\n" % n).decode(),
            "closeStdin": True})
        a = self.c.wait(rid, WAIT_S)
        d = self.take(pid)
        if w.get("result") != {}:
            return "write answered %s" % w
        if a.get("result") != {"exitCode": 0, "stdout": "", "stderr": ""}:
            return "exec answered %s" % a
        if bytes(d["stdout"]) != b"start\ngot:hi-%d\n" % n or bytes(d["stderr"]) != b"e\n":
            return "deltas %r" % d
        return None

    def m_pty(self, n):
        pid = "t-%d" % n
        rid = self.c.request("command/exec", {
            "command": ["sh", "-c", "read x; stty size; echo got:$x"], "processId": pid,
            "tty": True, "size": {"rows": 24, "cols": 80}, "sandboxPolicy": FULL})
        z = self.call("command/exec/resize", {"processId": pid, "size": {"rows": 30, "cols": 100}})
        w = self.call("command/exec/write", {
            "processId": pid, "deltaBase64": base64.b64encode(b"hello\n").decode()})
        a = self.c.wait(rid, WAIT_S)
        out = bytes(self.take(pid)["stdout"])
        if z.get("result") != {} or w.get("result") != {}:
            return "resize %s write %s" % (z, w)
        if a.get("result", {}).get("exitCode") != 0:
            return "exec answered %s" % a
        if b"30 100" not in out or b"got:hello" not in out:
            return "output %r" % out
        return None

    def m_terminate(self, n):
        pid = "k-%d" % n
        rid = self.c.request("command/exec", {
            "command": ["sleep", "30"], "processId": pid, "sandboxPolicy": FULL})
        t = self.call("command/exec/terminate", {"processId": pid})
        a = self.c.wait(rid, WAIT_S)
        self.take(pid)
        if t.get("result") != {} or a.get("result", {}).get("exitCode") != 137:
            return "terminate %s exec %s" % (t, a)
        return None

    def m_timeout(self, n):
        a = self.call("command/exec", {"command": ["sleep", "30"], "timeoutMs": 20 + n % 80,
                                       "sandboxPolicy": FULL})
        return None if a.get("result", {}).get("exitCode") == 124 else "got %s" % a

    def m_background(self, n):
        # a setsid'd grandchild: it must die with its command (strays() checks after the run)
        a = self.call("command/exec", {
            "command": ["sh", "-c", "setsid sleep %s >/dev/null 2>&1 & echo bg" % marker(n)],
            "sandboxPolicy": FULL})
        r = a.get("result")
        return None if r == {"exitCode": 0, "stdout": "bg\n", "stderr": ""} else "got %s" % a

    def m_readOnly(self, n):
        a = self.call("command/exec", {
            "command": ["sh", "-c", "cat /etc/passwd >/dev/null && echo r && "
                        "! touch ro-$0 2>/dev/null", str(n)],
            "cwd": self.ws, "sandboxPolicy": {"type": "readOnly"}})
        r = a.get("result")
        return None if r == {"exitCode": 0, "stdout": "r\n", "stderr": ""} else "got %s" % a

    def m_workspaceWrite(self, n):
        a = self.call("command/exec", {
            "command": ["sh", "-c", "echo w > f-$0 && cat f-$0 && rm f-$0", str(n)],
            "cwd": self.ws,
            "sandboxPolicy": {"type": "workspaceWrite", "writableRoots": [self.ws]}})
        r = a.get("result")
        return None if r == {"exitCode": 0, "stdout": "w\n", "stderr": ""} else "got %s" % a


def marker(n):
    """A sleep duration unique to this run and command: how its processes are found."""
    return "59.%d%07d" % (os.getpid(), n + 5000000)


def strays():
    """Pids of processes running a sleep of ours (their command was answered long ago)."""
    pre = b"sleep\x0059.%d" % os.getpid()
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    if f.read().startswith(pre):
                        out.append(int(d))
            except OSError:
                pass
    return out


def at_eof(c, soak, ws, n):
    """n long commands of every kind, then stdin EOF: all answered (137), exit 0, none left.
    Returns (answers, exit status, seconds from EOF to exit, pids left a second later)."""
    kinds = [
        {"sandboxPolicy": FULL},
        {"sandboxPolicy": FULL, "tty": True},
        {"sandboxPolicy": FULL, "streamStdoutStderr": True},
        {"sandboxPolicy": {"type": "readOnly"}, "cwd": ws},
        {"sandboxPolicy": {"type": "workspaceWrite", "writableRoots": [ws]}, "cwd": ws},
    ]
    ids = []
    for i in range(n):
        p = dict(kinds[i % len(kinds)], command=["sleep", marker(-1 - i)])
        if p.get("tty") or p.get("streamStdoutStderr"):
            p["processId"] = "eof-%d" % i
        ids.append(c.request("command/exec", p))
    end = time.monotonic() + 10
    while time.monotonic() < end and len(strays()) < n:
        time.sleep(0.05)
    t0 = time.monotonic()
    rc = c.close(30)
    took = time.monotonic() - t0
    answers = [c.pending[soaklib._key(i)].answer for i in ids]
    time.sleep(1)
    return answers, rc, took, strays()


def batch(soak, rng, first, count, concurrency):
    names = [m for m, _ in MODES]
    weights = [w for _, w in MODES]
    with ThreadPoolExecutor(concurrency) as pool:
        for n in range(first, first + count):
            pool.submit(soak.run, n, rng.choices(names, weights)[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--at-eof", type=int, default=16,
                    help="commands still running when stdin closes")
    ap.add_argument("--rss-slack-kib", type=int, default=2048)
    a, seed, rng, tmp = soaklib.parse_args(ap, "exec_soak")
    ws = os.path.join(tmp, "ws")
    os.mkdir(ws)
    home = os.path.join(tmp, "home")
    print("exec_soak: count %d, concurrency %d, warm-up %d, seed %d; %s" % (
        a.count, a.concurrency, a.warmup, seed, soaklib.machine()), flush=True)

    soak = Soak(None, ws)
    c = soaklib.Conn(a.bin, home=home, stderr_path=os.path.join(tmp, "stderr.log"),
                     on_notification=soak.on_notification)
    soak.c = c
    c.initialize("exec_soak")
    soaklib.settle(c.pid)
    cold = soaklib.snapshot(c.pid)
    print("cold (after initialize): %s" % soaklib.fmt_snap(cold), flush=True)
    batch(soak, rng, -a.warmup, a.warmup, a.concurrency)
    soaklib.settle(c.pid)
    base = soaklib.snapshot(c.pid)
    base_fds = soaklib.fd_kinds(c.pid)
    print("baseline (after warm-up): %s" % soaklib.fmt_snap(base), flush=True)

    t0 = time.monotonic()
    peak = dict(base)
    stop = threading.Event()

    def sample():
        while not stop.wait(0.5):
            try:
                s = soaklib.snapshot(c.pid)
            except OSError:
                return
            for k in s:
                peak[k] = max(peak[k], s[k])

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    batch(soak, rng, 0, a.count, a.concurrency)
    run_s = time.monotonic() - t0
    stop.set()
    sampler.join()
    soaklib.settle(c.pid)
    after = soaklib.snapshot(c.pid)
    after_fds = soaklib.fd_kinds(c.pid)
    print("after (%.1f s, %.0f commands/s): %s" % (run_s, (a.count + a.warmup) / run_s,
                                                   soaklib.fmt_snap(after)), flush=True)
    print("peak during the run: children %d, fds %d, RSS %.1f MiB, threads %d" % (
        peak["children"], peak["fds"], peak["rss_kib"] / 1024, peak["threads"]), flush=True)
    fin = c.call("config/read", {}, 10)
    left = strays()
    eof_answers, rc, eof_s, eof_left = at_eof(c, soak, ws, a.at_eof)

    ch = soaklib.Checks()
    total_done = sum(soak.done.values())
    for m, _ in MODES:
        f = soak.fail[m]
        ch.check("mode %s: %d ok, %d failed" % (m, soak.done[m], len(f)), not f,
                 "; ".join(f[:3]))
    ch.check("commands completed as expected: %d of %d" % (total_done, a.count + a.warmup),
             total_done == a.count + a.warmup)
    dup = [k for k, v in c.answered.items() if v > 1]
    missing = c.unanswered()
    ch.check("requests answered exactly once: %d sent, %d unanswered, %d answered twice, "
             "%d unknown ids, %d id-null answers" % (
                 len(c.answered), len(missing), len(dup), len(c.unknown_answers),
                 c.null_id_answers),
             not missing and not dup and not c.unknown_answers and c.null_id_answers == 0,
             "%s" % missing[:5])
    ch.check("no protocol errors seen by the reader", not c.errors, "; ".join(c.errors[:3]))
    ch.check("zombies after: %d" % after["zombies"], after["zombies"] == 0)
    ch.check("children after: %d" % after["children"], after["children"] == 0)
    extra = soaklib.fd_diff(base_fds, after_fds)
    ch.check("fds after %d vs baseline %d: equal but for the cgroup pool (<= %d cgroups)" % (
        after["fds"], base["fds"], soaklib.CGROUP_POOL),
             not extra, "kinds that differ (baseline, after): %s" % extra if extra else "")
    if os.environ.get("APP_SERVER_SANITIZED"):
        print("note  RSS not checked (APP_SERVER_SANITIZED: ASan's quarantine)")
    else:
        ch.check("RSS after %.2f MiB <= baseline %.2f MiB + %.1f MiB" % (
            after["rss_kib"] / 1024, base["rss_kib"] / 1024, a.rss_slack_kib / 1024),
            after["rss_kib"] <= base["rss_kib"] + a.rss_slack_kib,
            "growth %d KiB" % (after["rss_kib"] - base["rss_kib"]))
    ch.check("daemon alive at the end (config/read answered)", "result" in fin)
    ch.check("no process of a background mode command left: %d" % len(left), not left,
             "pids %s" % left[:5])
    codes = [x.get("result", {}).get("exitCode") if x else None for x in eof_answers]
    ch.check("stdin EOF with %d commands running (all kinds): each answered 137" % a.at_eof,
             codes == [137] * a.at_eof, "exit codes %s" % codes)
    ch.check("exit status 0 on stdin EOF (%.1f s after it)" % eof_s, rc == 0, "got %r" % rc)
    ch.check("no command's process outlives the daemon", not eof_left, "pids %s" % eof_left)
    return soaklib.finish(ch, tmp, "stderr.log")


if __name__ == "__main__":
    sys.exit(main())
