#!/usr/bin/env python3
"""Lifecycle soak: kill -9 during thread lifecycle operations and apply_patch turns.

--kills times on one CODEX_HOME: start the daemon (config.toml: approval_policy never,
sandbox_mode workspace-write; a mock model whose turns make an `apply_patch` function call
updating f.txt in the workspace, then answer), verify what the previous kill left, fire 1-6
requests without waiting for their answers, and kill -9 the daemon after a random delay. The
requests are drawn among thread/start, thread/fork, thread/archive, thread/unarchive,
thread/name/set, thread/resume + turn/start (alone, or followed by turn/interrupt or turn/steer
as soon as the turn/start answer names the turn) and thread/list. In REBUILD_SHARE of the
rounds the verifying daemon is closed instead (it must exit 0), the index file
(app-server-threads.sqlite) is deleted and a fresh daemon gets the requests with a thread/list
first, so that the kill lands during the index's full rebuild. Before the first kill a prologue
makes PROLOGUE_THREADS threads with two turns each (lists span pages, a rebuild takes a while).
The delay's ceiling starts at 8 ms for rounds with a turn, 3 ms for the others, and adapts
(x0.9 after a kill that came after every answer and every turn's end, x1.036 otherwise), so
that about 1 kill in 4 lands after everything was answered and the rest mid-operation.

Verified after every kill (before the restart: the files; after it: every thread, through the
daemon) and at the end:
  - every rollout under sessions/ and archived_sessions/ parses (every line a JSON object;
    only a last line without its newline may be partial), begins with its session_meta record
    (docs/threads.md: upstream needs it), one file per thread id, no other file there, no
    thread that was on disk before is gone;
  - nothing answered is lost: an answered thread/start or thread/fork is readable
    (thread/read), a fork holds the turns its answer listed (which must include every turn
    of its source seen completed before it was sent); an answered archive puts the file under
    archived_sessions/ (unarchive under sessions/), and the index lists it there (below); an
    answered name is what thread/read shows; a turn whose turn/completed was seen is in
    thread/read {includeTurns} with its status and the items seen completed;
  - the index matches the files: thread/list (all pages, every provider and source kind)
    gives exactly the ids of the rollout files holding a user message (docs/threads.md:
    zero-turn threads are not listed), those in sessions/ for archived false, those in
    archived_sessions/ for archived true (asked again after 1 s when not: a first answer may
    predate the start-up rescan, which docs/threads.md allows);
  - f.txt is always the whole old or the whole new content (62 KB, so a torn write shows),
    the new one once a fileChange item completed in the round; beside it only a killed
    daemon's `.apply_patch-<pid>-<n>.tmp|.bak` (docs/apply_patch.md: what a crash during the
    switch may leave), counted and removed; and the kill rounds' turns did commit patches
    (checked from --kills 100 on: a short run, or an ASan daemon, may kill every patch turn);
  - thread/start, thread/resume and thread/fork answer the configured approvalPolicy (never)
    and sandbox (workspaceWrite): the turns' patches depend on them;
  - at the end: no live process in the killed daemons' cgroups, the last daemon (and every
    closed one) exits 0 at stdin EOF.
A kept folder (on failure) also holds rounds.jsonl (per kill: the requests, their answers,
where the kill landed) and problems.txt (every problem, not only the first four).

usage: tests/soak/lifecycle_soak.py [--kills 200] [--seed S] [--bin PATH]
"""
import argparse
import json
import os
import re
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soaklib  # noqa: E402
import turn_soak  # noqa: E402
from turn_soak import Mock, check_history, check_rollouts, listed_ids, text  # noqa: E402

INDEX = "app-server-threads.sqlite"
OLD = "old\n" + "".join("line %04d of the file the soak's turns patch\n" % i for i in range(1400))
NEW = "new" + OLD[3:]
PATCH = "*** Begin Patch\n*** Update File: f.txt\n@@\n-old\n+new\n*** End Patch\n"
DEBRIS = re.compile(r"^\.apply_patch-(\d+)-(\d+)\.(tmp|bak)$")
ID_TAIL = len("00000000-0000-0000-0000-000000000000.jsonl")
KINDS = [("start", 2), ("fork", 2), ("archive", 1.5), ("unarchive", 1), ("name", 1.5),
         ("turn", 1.5), ("turn+interrupt", 1), ("turn+steer", 1), ("list", 1)]
METHODS = ["thread/start", "thread/fork", "thread/archive", "thread/unarchive",
           "thread/name/set", "thread/resume", "turn/start", "turn/interrupt", "turn/steer",
           "thread/list"]
REBUILD_SHARE = 0.15
PROLOGUE_THREADS = 300


def script(turns):
    """Per turn an apply_patch function call (f.txt: old -> new), then a message."""
    out = []
    for n in range(turns):
        out.append({"events": [
            {"ev": "created", "id": "resp-p%d" % n},
            {"ev": "function_call", "call_id": "patch-%d" % n, "name": "apply_patch",
             "arguments": {"input": PATCH}},
            {"ev": "completed", "id": "resp-p%d" % n}]})
        out.append({"events": [
            {"ev": "created", "id": "resp-m%d" % n},
            {"ev": "message", "id": "msg-%d" % n, "text": "patched %d" % n},
            {"ev": "completed", "id": "resp-m%d" % n}]})
    return {"responses": out, "repeat": True}


class Op:
    """One request of a round: what it was about and its answer, if one came."""

    __slots__ = ("kind", "method", "thread", "params", "rid", "sent", "answer", "before")

    def __init__(self, kind, method, thread, params):
        self.kind, self.method, self.thread, self.params = kind, method, thread, params
        self.rid, self.sent, self.answer, self.before = None, False, None, None

    def ok(self):
        return self.answer is not None and "result" in self.answer


class Round:
    """The requests fired at one daemon (in send order) and what its notifications said."""

    def __init__(self, k, rebuild):
        self.k, self.rebuild = k, rebuild
        self.lock = threading.Lock()
        self.ops = []
        self.turns = []          # turn ids whose turn/start was answered
        self.patches = {}        # fileChange item status -> count (item/completed)

    def add(self, op):
        with self.lock:
            self.ops.append(op)


class Expect:
    """What the disk must show, carried from round to round."""

    def __init__(self):
        self.folder = {}         # thread id -> "sessions" | "archived_sessions" | None (either)
        self.name = {}           # thread id -> name, or None when a name/set went unanswered
        self.fork_turns = {}     # fork id -> turn ids its answer listed
        self.readable = set()    # ids whose thread/start or thread/fork was answered


def scan_files(home):
    """{id: [(folder, path, has_user, has_meta)]} of the rollout files, and the other files.
    has_user is the index's rule (rollout_summary.c): an event_msg user_message or an
    item_completed of a UserMessage among the first 512 records; has_meta: the first line is
    a whole session_meta record (docs/threads.md: upstream needs it, "ours is")."""
    out, other = {}, []
    for folder in ("sessions", "archived_sessions"):
        for root, _, files in os.walk(os.path.join(home, folder)):
            for name in files:
                path = os.path.join(root, name)
                if not (name.startswith("rollout-") and name.endswith(".jsonl")):
                    other.append(path)
                    continue
                has_user = False
                with open(path, "rb") as f:
                    lines = f.read().split(b"\n")[:-1][:512]
                try:
                    has_meta = json.loads(lines[0]).get("type") == "session_meta"
                except (IndexError, ValueError, AttributeError):
                    has_meta = False
                for line in lines:
                    if b"user_message" not in line and b"UserMessage" not in line:
                        continue
                    try:
                        p = json.loads(line).get("payload", {})
                    except ValueError:
                        continue
                    if p.get("type") == "user_message" or (
                            p.get("type") == "item_completed" and
                            (p.get("item") or {}).get("type") == "UserMessage"):
                        has_user = True
                        break
                out.setdefault(name[-ID_TAIL:-len(".jsonl")], []).append(
                    (folder, path, has_user, has_meta))
    return out, other


def known_turns(turns, exp, thread_id):
    """Turn ids the thread's file must hold: its own completed turns, and a fork's copies."""
    with turns.lock:
        own = {t for t, th in turns.owner.items() if th == thread_id and t in turns.completed}
    return own | exp.fork_turns.get(thread_id, set())


class Soak:
    """The state of a run: options, daemon factory, expectations, counters."""

    def __init__(self, a, rng, tmp):
        self.a, self.rng, self.tmp = a, rng, tmp
        self.home, self.ws = os.path.join(tmp, "home"), os.path.join(tmp, "ws")
        self.turns = turn_soak.Turns(rng)
        self.turns.owner = {}
        self.exp = Expect()
        self.cur = None          # the Round being fired
        self.bad = []            # problems: (check name, text)
        self.stats = {"files_checked": 0, "lines_checked": 0, "partial_last_lines": 0,
                      "turns_verified": 0, "items_verified": 0, "cut_turn_items_seen": 0,
                      "cut_turn_items_lost": 0}
        self.counts = {m: {"sent": 0, "result": 0, "error": 0, "unanswered": 0}
                       for m in METHODS}
        self.kinds = {k: 0 for k, _ in KINDS}
        self.errors = {}         # (method, message) -> count
        self.landed = {}
        self.verified = {"readable": 0, "forks": 0, "fork_turns": 0, "archive": 0,
                         "unarchive": 0, "names": 0, "lists": 0, "lists_stale_first": 0}
        self.ftxt = {"old": 0, "new": 0, "patched_rounds": 0, "debris": 0}
        self.killed, self.exits = [], []
        self.headless = {}       # rollouts without a session_meta first line -> size
        self.patches = {}        # fileChange status -> count, over the kill rounds
        self.settings = {}       # (method, approvalPolicy, sandbox type) -> count

    def problem(self, check, msg):
        self.bad.append((check, "kill %d: %s" % (self.cur.k if self.cur else -1, msg)))

    def on_notification(self, c, msg):
        self.turns.on_notification(c, msg)
        rnd = self.cur
        if msg["method"] == "item/completed" and rnd is not None:
            it = msg["params"]["item"]
            if it.get("type") == "fileChange":
                with rnd.lock:
                    rnd.patches[it["status"]] = rnd.patches.get(it["status"], 0) + 1

    def spawn(self):
        c = soaklib.Conn(self.a.bin, home=self.home,
                         stderr_path=os.path.join(self.tmp, "stderr.log"),
                         on_notification=self.on_notification,
                         on_server_request=self.turns.on_server_request)
        c.initialize("lifecycle_soak")
        return c

    # -- firing --------------------------------------------------------------------------

    def send(self, c, rnd, op, then=None):
        """Send op without waiting; then(answer) runs on the reader thread."""
        def cb(ans):
            op.answer = ans
            if then is not None:
                then(ans)
        rnd.add(op)
        try:
            op.rid = c.request(op.method, op.params, callback=cb)
            op.sent = True
        except (OSError, ValueError):
            pass  # the daemon is being killed

    def pick(self, want):
        """A thread whose expected folder is `want` (None: any), or None."""
        ids = sorted(t for t, f in self.exp.folder.items() if want is None or f == want)
        return self.rng.choice(ids) if ids else None

    def fire(self, c, rnd):
        """1-6 requests, pipelined; a rebuild round starts with thread/list."""
        n = self.rng.randint(1, 6)
        kinds = self.rng.choices([k for k, _ in KINDS], [w for _, w in KINDS], k=n)
        if rnd.rebuild:
            kinds[0] = "list"
        turned = set()
        for i, kind in enumerate(kinds):
            if kind == "unarchive" and self.pick("archived_sessions") is None:
                kind = "archive"
            if kind != "start" and kind != "list" and not self.exp.folder:
                kind = "start"
            self.kinds[kind] += 1
            if kind == "start":
                self.send(c, rnd, Op(kind, "thread/start", None, {
                    "cwd": self.ws, "approvalPolicy": "never", "sandbox": "workspace-write"}))
            elif kind == "fork":
                src = self.pick(None)
                op = Op(kind, "thread/fork", src, {"threadId": src})
                op.before = known_turns(self.turns, self.exp, src)
                self.send(c, rnd, op)
            elif kind in ("archive", "unarchive"):
                t = self.pick("sessions" if kind == "archive" else "archived_sessions")
                if t is None or self.rng.random() < 0.15:
                    t = self.pick(None)  # sometimes one in the other state: an error
                self.send(c, rnd, Op(kind, "thread/" + kind, t, {"threadId": t}))
            elif kind == "name":
                t = self.pick(None)
                self.send(c, rnd, Op(kind, "thread/name/set", t, {
                    "threadId": t, "name": "name %d.%d" % (rnd.k, i)}))
            elif kind.startswith("turn"):
                t = self.pick("sessions")
                if t is None or t in turned:
                    t = self.pick(None)
                turned.add(t)
                self.send(c, rnd, Op(kind, "thread/resume", t, {"threadId": t}))
                self.send(c, rnd, Op(kind, "turn/start", t, {
                    "threadId": t, "input": text("patch f.txt (%d.%d)" % (rnd.k, i))}),
                    then=self.chain(c, rnd, kind, t, i))
            else:
                self.send(c, rnd, Op(kind, "thread/list", None, {
                    "limit": 100, "modelProviders": [], "sourceKinds": turn_soak.SOURCE_KINDS}))

    def chain(self, c, rnd, kind, thread_id, i):
        """On the turn/start answer: note the turn, then interrupt or steer it at once."""
        def then(ans):
            if "result" not in ans:
                return
            tid = ans["result"]["turn"]["id"]
            with self.turns.lock:
                self.turns.owner.setdefault(tid, thread_id)
            with rnd.lock:
                rnd.turns.append(tid)
            if kind == "turn+interrupt":
                self.send(c, rnd, Op(kind, "turn/interrupt", thread_id,
                                     {"threadId": thread_id, "turnId": tid}))
            elif kind == "turn+steer":
                self.send(c, rnd, Op(kind, "turn/steer", thread_id, {
                    "threadId": thread_id, "expectedTurnId": tid,
                    "input": text("steer (%d.%d)" % (rnd.k, i))}))
        return then

    # -- after the kill ------------------------------------------------------------------

    def account(self, rnd):
        """Count answers by method, note where the kill landed, carry the expectations."""
        with rnd.lock:
            ops = list(rnd.ops)
            started = list(rnd.turns)
            for st, n in rnd.patches.items():
                self.patches[st] = self.patches.get(st, 0) + n
        waiting = [op for op in ops if op.sent and op.answer is None]
        running = [t for t in started if not self.turns.event(t).is_set()]
        if not waiting and not running:
            where = "after every answer and turn end"
        elif waiting:
            where = "before the answer to " + waiting[0].method
            if rnd.rebuild and waiting[0].method == "thread/list":
                where += " (index rebuild)"
        else:
            with self.turns.lock:
                last = self.turns.last.get(self.turns.owner.get(running[0]), "?")
            where = "turn running (requests answered), last event " + last
        self.landed[where] = self.landed.get(where, 0) + 1
        with open(os.path.join(self.tmp, "rounds.jsonl"), "a") as f:
            f.write(json.dumps({"kill": rnd.k, "rebuild": rnd.rebuild, "pid": self.killed[-1],
                                "where": where, "turns": started, "ops": [
                                    [op.method, op.thread, op.answer is not None and (
                                        "result" if op.ok() else op.answer.get("error"))]
                                    for op in ops if op.sent]}) + "\n")
        for op in ops:
            if not op.sent:
                continue
            n = self.counts[op.method]
            n["sent"] += 1
            if op.answer is None:
                n["unanswered"] += 1
            elif op.ok():
                n["result"] += 1
            else:
                n["error"] += 1
                key = (op.method, re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}", "<id>",
                                         str(op.answer.get("error", {}).get("message"))))
                self.errors[key] = self.errors.get(key, 0) + 1
        for op in ops:
            self.expect(op)
        return not waiting and not running

    def expect(self, op):
        """What an answered (or unanswered) request means for the disk."""
        exp = self.exp
        if op.method in ("thread/start", "thread/resume", "thread/fork") and op.ok():
            r = op.answer["result"]
            key = (op.method, str(r.get("approvalPolicy")), (r.get("sandbox") or {}).get("type"))
            self.settings[key] = self.settings.get(key, 0) + 1
            if key[1:] != ("never", "workspaceWrite"):
                self.problem("settings", "%s %s answered approvalPolicy %s, sandbox %s" % (
                    op.method, r["thread"]["id"], key[1], key[2]))
        if op.method in ("thread/start", "thread/fork") and op.ok():
            t = op.answer["result"]["thread"]
            exp.readable.add(t["id"])
            exp.folder[t["id"]] = "sessions"
            if op.method == "thread/fork":
                ids = {x["id"] for x in t.get("turns", [])}
                exp.fork_turns[t["id"]] = ids
                if not op.before <= ids:
                    self.problem("forks", "fork %s of %s lacks the source's completed turns %s"
                                 % (t["id"], op.thread, sorted(op.before - ids)))
        elif op.method in ("thread/archive", "thread/unarchive") and op.sent:
            if op.answer is None:
                exp.folder[op.thread] = None
            elif op.ok():
                exp.folder[op.thread] = ("archived_sessions" if op.method == "thread/archive"
                                         else "sessions")
        elif op.method == "thread/name/set" and op.sent:
            if op.answer is None:
                exp.name[op.thread] = None
            elif op.ok():
                exp.name[op.thread] = op.params["name"]

    def check_files(self, rnd, when):
        """Rollouts whole, one file per thread, nothing gone; f.txt whole, debris counted."""
        for folder in ("sessions", "archived_sessions"):
            bad, _ = check_rollouts(self.home, self.stats, folder)
            for b in bad:
                self.problem("rollouts", "%s: %s/%s" % (when, folder, b))
        files, other = scan_files(self.home)
        for p in other:
            self.problem("rollouts", "%s: unexpected file %s" % (when, p))
        for t, fs in files.items():
            if len(fs) > 1:
                self.problem("rollouts", "%s: thread %s has %d files: %s" % (
                    when, t, len(fs), [f[1] for f in fs]))
            if not fs[0][3] and fs[0][1] not in self.headless:
                self.headless[fs[0][1]] = os.path.getsize(fs[0][1])
                self.problem("meta", "%s: %s (%d bytes) does not begin with a session_meta "
                             "record" % (when, fs[0][1][len(self.home) + 1:],
                                         self.headless[fs[0][1]]))
        for t in self.exp.folder:  # every thread seen on disk or answered before
            if t not in files:
                self.problem("lost", "%s: thread %s has no rollout any more" % (when, t))
        return files, self.check_workspace(rnd, when)

    def check_workspace(self, rnd, when):
        with open(os.path.join(self.ws, "f.txt")) as f:
            data = f.read()
        state = "old" if data == OLD else "new" if data == NEW else None
        if state is None:
            self.problem("patch", "%s: f.txt is neither the old nor the new content (%d "
                         "bytes, starts %r)" % (when, len(data), data[:20]))
        if rnd is not None and rnd.patches.get("completed") and state != "new":
            self.problem("patch", "%s: a fileChange completed, f.txt is %s" % (when, state))
        for name in sorted(os.listdir(self.ws)):
            if name == "f.txt":
                continue
            m = DEBRIS.match(name)
            if m is None or int(m.group(1)) not in self.killed:
                self.problem("debris", "%s: %s left beside f.txt%s" % (
                    when, name, "" if m is None else " (pid %s was not killed)" % m.group(1)))
            else:
                self.ftxt["debris"] += 1
            os.unlink(os.path.join(self.ws, name))
        return state

    def verify(self, c, rnd, final=False):
        """After a restart: files, then what was answered, through the daemon."""
        files, _ = self.check_files(rnd, "after restart")
        if rnd is not None and rnd.patches.get("completed"):
            self.ftxt["patched_rounds"] += 1
        self.misnamed = []
        for t in sorted(set(files) | self.exp.readable):
            self.verify_thread(c, t, files, rnd, final)
        if self.misnamed:  # what a read 1 s later shows: a late name, or none
            time.sleep(1.0)
        for t, name in self.misnamed:
            try:
                later = c.result("thread/read", {"threadId": t}, 30)["thread"].get("name")
            except Exception as e:
                later = "%s: %s" % (type(e).__name__, e)
            self.problem("names", "thread %s: name %r, the last answered name/set said %r "
                         "(1 s later: %r)" % (t, name, self.exp.name[t], later))
        try:
            self.verify_lists(c, files)
        except Exception as e:
            self.problem("index", "thread/list: %s: %s" % (type(e).__name__, e))
        # the new baseline: every thread where its file is
        for t, fs in files.items():
            self.exp.folder[t] = fs[0][0]

    def verify_thread(self, c, t, files, rnd, final):
        exp = self.exp
        want = exp.folder.get(t)
        if t in files and want is not None and files[t][0][0] != want:
            self.problem("archive", "thread %s is under %s/, its last answered archive state "
                         "says %s/" % (t, files[t][0][0], want))
        elif t in files and want is not None and rnd is not None and any(
                op.thread == t and op.ok() and op.method in ("thread/archive",
                                                             "thread/unarchive")
                for op in rnd.ops):
            self.verified["archive" if want == "archived_sessions" else "unarchive"] += 1
        if t in files and not files[t][0][3] and t not in exp.readable:
            return  # reported by the session_meta check; no answer promised this thread
        try:  # the turns whose turn/completed was seen, with their status and items
            bad, have = check_history(c, self.turns, t, self.stats, cut=final)
        except Exception as e:
            self.problem("readable", "thread/read %s {includeTurns}: %s" % (t, e))
            return
        for b in bad:
            self.problem("turns", b)
        if t in exp.readable:
            self.verified["readable"] += 1
        if t in exp.fork_turns:
            lost = exp.fork_turns[t] - set(have)
            if lost:
                self.problem("forks", "fork %s lost turns %s" % (t, sorted(lost)))
            self.verified["forks"] += 1
            self.verified["fork_turns"] += len(exp.fork_turns[t])
        if exp.name.get(t) is not None:
            try:
                name = c.result("thread/read", {"threadId": t}, 30)["thread"].get("name")
            except Exception as e:
                self.problem("readable", "thread/read %s: %s" % (t, e))
                return
            if name != exp.name[t]:
                self.misnamed.append((t, name))
            else:
                self.verified["names"] += 1

    def verify_lists(self, c, files):
        """thread/list == the files with a user message, per folder; asked again after 1 s when
        not (a first answer may predate the start-up rescan: docs/threads.md)."""
        for archived, folder in ((False, "sessions"), (True, "archived_sessions")):
            want = sorted(t for t, fs in files.items() if fs[0][0] == folder and fs[0][2])
            for attempt in range(2):
                got = listed_ids(c, archived)
                if sorted(got) == want and len(set(got)) == len(got):
                    break
                if attempt == 0:
                    self.verified["lists_stale_first"] += 1
                    first = got
                    time.sleep(1.0)
            else:
                self.problem("index", "thread/list archived=%s: %d ids, %d files with a user "
                             "message (missing %s, extra %s; first answer missing %s, extra "
                             "%s)" % (archived, len(got), len(want),
                                      sorted(set(want) - set(got))[:4],
                                      sorted(set(got) - set(want))[:4],
                                      sorted(set(want) - set(first))[:4],
                                      sorted(set(first) - set(want))[:4]))
            self.verified["lists"] += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kills", type=int, default=200)
    a, seed, rng, tmp = soaklib.parse_args(ap, "lifecycle_soak")
    s = Soak(a, rng, tmp)
    os.mkdir(s.home)
    os.mkdir(s.ws)
    with open(os.path.join(s.ws, "f.txt"), "w") as f:
        f.write(OLD)
    print("lifecycle_soak: %d kills, seed %d; %s" % (a.kills, seed, soaklib.machine()),
          flush=True)
    mock = Mock(a.bin, tmp, 0, script_obj=script(6 * a.kills + 2 * PROLOGUE_THREADS + 50))
    turn_soak.write_config(s.home, mock.port, approval="never")
    ch = soaklib.Checks()
    prologue(s)
    # the kill delay's ceiling, adapted apart for rounds with and without a turn
    max_delay, delays, after_all, rebuilds = {True: 0.008, False: 0.003}, [], 0, 0
    t0 = time.monotonic()
    rnd = None
    for k in range(a.kills + 1):
        c = s.spawn()
        s.verify(c, rnd, final=k == a.kills)
        with open(os.path.join(s.ws, "f.txt")) as f:
            if f.read() != OLD:
                with open(os.path.join(s.ws, "f.txt.reset"), "w") as g:
                    g.write(OLD)
                os.replace(os.path.join(s.ws, "f.txt.reset"), os.path.join(s.ws, "f.txt"))
        s.bad += [("protocol", "kill %d: %s" % (k, e)) for e in c.errors]
        if k == a.kills:
            s.exits.append(c.close())
            break
        rnd = Round(k, s.rng.random() < REBUILD_SHARE)
        if rnd.rebuild:
            rebuilds += 1
            s.exits.append(c.close())
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(os.path.join(s.home, INDEX + suffix)):
                    os.unlink(os.path.join(s.home, INDEX + suffix))
            c = s.spawn()
        s.cur = rnd
        s.fire(c, rnd)
        kind = any(op.method == "turn/start" for op in rnd.ops)
        delay = s.rng.uniform(0, max_delay[kind])
        delays.append(delay)
        time.sleep(delay)
        c.kill9()
        s.killed.append(c.pid)
        s.turns.forget_conn(c.pid)
        s.bad += [("protocol", "kill %d: %s" % (k, e)) for e in c.errors]
        if s.account(rnd):
            after_all += 1
            max_delay[kind] *= 0.9     # aim at ~1 kill in 4 after everything, the rest mid-way
        else:
            max_delay[kind] *= 1.036
        _, state = s.check_files(rnd, "before restart")
        if state:
            s.ftxt[state] += 1
    s.cur = None
    run_s = time.monotonic() - t0
    report(s, ch, a, run_s, delays, after_all, rebuilds)
    ch.check("mock model exits 0", mock.stop() == 0)
    return soaklib.finish(ch, tmp, "stderr.log", "mock.log")


def prologue(s):
    """Before the first kill: PROLOGUE_THREADS threads with two patch turns each, waited for,
    so that forks, archives and lists have turns and user messages to carry, lists have more
    than one page, and a rebuild of the index takes long enough for a kill to land in it."""
    c = s.spawn()
    for i in range(PROLOGUE_THREADS):
        t = c.result("thread/start", {"cwd": s.ws, "approvalPolicy": "never",
                                      "sandbox": "workspace-write"})["thread"]["id"]
        s.exp.readable.add(t)
        s.exp.folder[t] = "sessions"
        for n in range(2):
            tid, _ = turn_soak.run_turn(c, s.turns, t, n)
            with s.turns.lock:
                s.turns.owner[tid] = t
    s.exits.append(c.close())
    s.bad += [("protocol", "prologue: %s" % e) for e in c.errors]
    with open(os.path.join(s.ws, "f.txt"), "w") as f:
        f.write(OLD)


def report(s, ch, a, run_s, delays, after_all, rebuilds):
    """The figures, then one line per check."""
    delays = sorted(delays) or [0]
    print("%d kills in %.1f s (%d rebuild rounds); %d after every answer and turn end; kill "
          "delays %.1f .. %.1f ms (median %.1f)" % (
              len(s.killed), run_s, rebuilds, after_all, delays[0] * 1000, delays[-1] * 1000,
              delays[len(delays) // 2] * 1000), flush=True)
    print("where the kills landed: %s" % ", ".join(
        "%s %d" % kv for kv in sorted(s.landed.items(), key=lambda kv: -kv[1])))
    print("operations drawn: %s" % ", ".join("%s %d" % kv for kv in s.kinds.items()))
    for m, n in s.counts.items():
        print("  %-16s sent %4d, answered before the kill %4d (result %d, error %d), "
              "unanswered %d" % (m, n["sent"], n["result"] + n["error"], n["result"],
                                 n["error"], n["unanswered"]))
    for (m, msg), n in sorted(s.errors.items(), key=lambda kv: -kv[1]):
        print("  error answers: %s %dx %s" % (m, n, msg[:100]))
    files, _ = scan_files(s.home)
    print("at the end: %d threads (%d archived, %d with a user message), %d turns owned" % (
        len(files), sum(1 for fs in files.values() if fs[0][0] == "archived_sessions"),
        sum(1 for fs in files.values() if fs[0][2]), len(s.turns.owner)))
    print("files: %s" % ", ".join("%s %d" % kv for kv in s.stats.items()))
    print("verified: %s" % ", ".join("%s %d" % kv for kv in s.verified.items()))
    print("f.txt after the kills: %s; fileChange items completed in the kill rounds, by "
          "status: %s" % (", ".join("%s %d" % kv for kv in s.ftxt.items()), s.patches))
    print("settings answered (method, approvalPolicy, sandbox): %s" % ", ".join(
        "%s %s %s %d" % (k + (n,)) for k, n in sorted(s.settings.items())), flush=True)
    bad = {}
    for name, msg in s.bad:
        bad.setdefault(name, []).append(msg)
    with open(os.path.join(s.tmp, "problems.txt"), "w") as f:
        f.writelines("%s: %s\n" % kv for kv in s.bad)

    def line(name, label):
        ch.check(label, not bad.get(name), "%d problems; %s" % (
            len(bad.get(name, [])), "; ".join(bad.get(name, [])[:4])))

    line("rollouts", "rollouts under sessions/ and archived_sessions/ parse, one file per "
         "thread, nothing else there (%d file reads, %d lines)" % (
             s.stats["files_checked"], s.stats["lines_checked"]))
    line("meta", "every rollout begins with its session_meta record (%d files do not)" %
         len(s.headless))
    line("lost", "no thread that was on disk or answered is gone")
    line("readable", "answered thread/start and thread/fork readable after restart (%d reads)"
         % s.verified["readable"])
    line("forks", "answered forks hold their source's turns (%d forks, %d turns)" % (
        s.verified["forks"], s.verified["fork_turns"]))
    line("archive", "answered archive/unarchive: the file in its folder (%d archived, %d "
         "unarchived verified)" % (s.verified["archive"], s.verified["unarchive"]))
    line("names", "answered names shown by thread/read (%d checks)" % s.verified["names"])
    line("turns", "completed turns in thread/read with status and items (%d turns, %d items)"
         % (s.stats["turns_verified"], s.stats["items_verified"]))
    line("index", "thread/list (archived false and true) == the rollout files with a user "
         "message (%d lists, %d first answers stale)" % (
             s.verified["lists"], s.verified["lists_stale_first"]))
    line("patch", "f.txt always whole (old %d, new %d after the kills), new after a completed "
         "fileChange" % (s.ftxt["old"], s.ftxt["new"]))
    line("debris", "beside f.txt only a killed daemon's .apply_patch-* files (%d removed)"
         % s.ftxt["debris"])
    # Coverage, not behaviour: a short run (an ASan daemon is slow) may kill every patch turn
    # before it lands, so only a run of the default size must have seen patches land.
    landed = s.patches.get("completed", 0)
    if a.kills >= 100:
        ch.check("the kill rounds' turns committed patches (%d fileChange items completed)" %
                 landed, landed > 0, "statuses %s: the f.txt checks saw no patch land" %
                 s.patches)
    else:
        print("note  %d patches landed in the kill rounds (checked from --kills 100 on)" %
              landed)
    line("settings", "thread/start, thread/resume and thread/fork answer config.toml's "
         "approvalPolicy never and sandbox workspaceWrite")
    line("protocol", "every answer matched one request once, every output line an object")
    ch.check("no turn completed twice", not s.turns.late, "%s" % s.turns.late[:5])
    ch.check("items started/completed once each", not s.turns.item_errors,
             "; ".join(s.turns.item_errors[:3]))
    time.sleep(1)  # a killed daemon's children die with it; only a live one is left behind
    left = soaklib.in_cgroups_of(s.killed)
    live = [p for p in left if soaklib.state(p) not in ("Z", "")]
    ch.check("no live process left in the killed daemons' command cgroups", not live,
             "%s" % [soaklib.describe(p) for p in live[:5]])
    ch.check("daemons closed at stdin EOF exit 0 (%d, the last one included)" % len(s.exits),
             all(rc == 0 for rc in s.exits), "statuses %s" % sorted(set(s.exits), key=str))


if __name__ == "__main__":
    sys.exit(main())
