#!/usr/bin/env python3
"""Turn soak: approvals under load (phase A), then kill -9 mid-turn and recovery (phase B).

`app-server mock-model` serves a generated script: for every turn a response with an
exec_command tool call (`touch soak-N.txt && echo ok-N`, which the "untrusted" approval policy
sends to the client as item/commandExecution/requestApproval), then a final message. The soak
answers each approval accept or decline at random. Responses are handed out in request order
across connections, so a turn that takes a message where a tool call was due simply ends early,
and the next turn is back in step; the checks never depend on which response a turn got.

Phase A: --turns turns in --rounds rounds, each on --threads new threads (one turn at a time
per thread, the threads side by side), unloaded at the round's end (thread/unsubscribe with
APP_SERVER_THREAD_IDLE_SECS=1, then thread/closed). Each turn must end with exactly one
turn/completed (also none late), every item that starts must complete once, every server
request must be resolved. The daemon's fds, zombies and RSS are compared with the start (after
a warm-up, its threads unloaded): fds equal (but for the cgroup pool and libcurl's connection
cache, whose sockets must stay <= 4 x --threads), no zombie, RSS with a round's threads
loaded <= start + --rss-slack-kib (a loaded thread keeps its model history in memory: ~1.5 KiB
a turn), and RSS with the threads unloaded no more than 1 MiB above round 1's (no growth per
turn).

Phase B: --kills times: start the daemon on the same CODEX_HOME, thread/resume a thread (must
succeed), check it (below), start a turn, wait a random delay (0 .. D), kill -9. D starts at half
the median time of a turn run alone and adapts (x0.9 after a kill that came after the turn's
end, x1.03 otherwise) so that about 1 kill in 5 lands after the end and the rest mid-turn.
After every kill, and at the end:
  - every rollout file under CODEX_HOME/sessions parses: every line is a JSON object, except
    that the last may be partial when it has no trailing newline;
  - nothing lost: every turn whose turn/completed was seen (phase A and B) is in thread/read
    {includeTurns} with its status and every item whose item/completed was seen;
  - the index matches the files: thread/list (all pages, every provider and source) gives
    exactly the ids of the rollout files.
After --tear of the kills the killed thread's rollout also gets a torn tail (a prefix of its
last record, no newline), as a crash inside a write(2) would leave it: the daemon must cut it
before appending (a torn line in the middle of a file fails the first check). At the end no
live process may be left in the killed daemons' per-command cgroups.

usage: tests/soak/turn_soak.py [--turns 1000] [--threads 4] [--rounds 2] [--kills 200]
                               [--seed S] [--bin PATH]
"""
import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soaklib  # noqa: E402

TURN_WAIT_S = 60.0
SOURCE_KINDS = ["cli", "vscode", "exec", "appServer", "subAgent", "subAgentReview",
                "subAgentCompact", "subAgentThreadSpawn", "subAgentOther", "unknown"]


def script(turns):
    """Tool call then answer, per turn; the final answer repeats past the end."""
    out = []
    for n in range(turns):
        out.append({"events": [
            {"ev": "created", "id": "resp-t%d" % n},
            {"ev": "function_call", "call_id": "call-%d" % n, "name": "exec_command",
             "arguments": {"cmd": "touch soak-%d.txt && echo ok-%d" % (n, n)}},
            {"ev": "completed", "id": "resp-t%d" % n}]})
        out.append({"events": [
            {"ev": "created", "id": "resp-m%d" % n},
            {"ev": "message_added", "id": "msg-%d" % n},
            {"ev": "text_delta", "delta": "done "},
            {"ev": "message", "id": "msg-%d" % n, "text": "done %d" % n},
            {"ev": "completed", "id": "resp-m%d" % n}]})
    return {"responses": out, "repeat": True}


class Mock:
    """`app-server mock-model` with a script (script(turns), or the one given: other soaks
    reuse it); the port is the first line of its stdout."""

    def __init__(self, binary, tmp, turns, script_obj=None):
        path = os.path.join(tmp, "script.json")
        with open(path, "w") as f:
            json.dump(script(turns) if script_obj is None else script_obj, f)
        self.p = subprocess.Popen([binary, "mock-model", "--listen", "127.0.0.1:0", "--script",
                                   path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=open(os.path.join(tmp, "mock.log"), "ab"))
        self.port = int(self.p.stdout.readline())

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        return self.p.wait(10)


class Turns:
    """What the notifications said, per turn and per item, across daemons."""

    def __init__(self, rng):
        self.rng = rng
        self.lock = threading.Lock()
        self.completed = {}     # turn id -> number of turn/completed
        self.status = {}        # turn id -> status in turn/completed
        self.done_ev = {}       # turn id -> Event
        self.items = {}         # turn id -> {item id: type} (item/completed seen)
        self.item_state = {}    # item id -> "started" | "completed"
        self.item_errors = []
        self.asked = {}         # (conn pid, request id) -> method
        self.decisions = {"accept": 0, "decline": 0}
        self.last = {}          # thread id -> last method seen (where a kill landed)
        self.late = []          # turn/completed for a turn already completed
        self.closed = {}        # thread id -> Event (thread/closed)

    def closed_ev(self, thread_id):
        with self.lock:
            return self.closed.setdefault(thread_id, threading.Event())

    def event(self, turn_id):
        with self.lock:
            return self.done_ev.setdefault(turn_id, threading.Event())

    def on_notification(self, conn, msg):
        m, p = msg["method"], msg.get("params", {})
        with self.lock:
            if "threadId" in p:
                self.last[p["threadId"]] = m
            if m == "thread/closed":
                self.closed.setdefault(p["threadId"], threading.Event()).set()
            if m == "turn/completed":
                tid = p["turn"]["id"]
                n = self.completed.get(tid, 0) + 1
                self.completed[tid] = n
                self.status[tid] = p["turn"]["status"]
                if n > 1:
                    self.late.append(tid)
                self.done_ev.setdefault(tid, threading.Event()).set()
            elif m in ("item/started", "item/completed"):
                it = p["item"]
                st = self.item_state.get(it["id"])
                if m == "item/started":
                    if st is not None:
                        self.item_errors.append("item %s started twice" % it["id"])
                    self.item_state[it["id"]] = "started"
                else:
                    if st != "started":
                        self.item_errors.append("item %s completed while %s" % (it["id"], st))
                    self.item_state[it["id"]] = "completed"
                    self.items.setdefault(p["turnId"], {})[it["id"]] = it["type"]
            elif m == "serverRequest/resolved":
                self.asked.pop((conn.pid, p["requestId"]), None)

    def on_server_request(self, conn, msg):
        with self.lock:
            self.asked[(conn.pid, msg["id"])] = msg["method"]
            d = "accept" if self.rng.random() < 0.6 else "decline"
            self.decisions[d] += 1
        try:
            conn.reply(msg["id"], {"decision": d})
        except OSError:
            pass  # the daemon was killed meanwhile

    def forget_conn(self, pid):
        """A killed daemon's pending requests cannot be resolved any more."""
        with self.lock:
            for k in [k for k in self.asked if k[0] == pid]:
                del self.asked[k]


def text(s):
    return [{"type": "text", "text": s, "text_elements": []}]


def run_turn(c, turns, thread_id, n):
    """One turn to its end; returns (turn id, seconds) or raises."""
    t0 = time.monotonic()
    r = c.result("turn/start", {"threadId": thread_id, "input": text("turn %d" % n)}, 30)
    tid = r["turn"]["id"]
    if not turns.event(tid).wait(TURN_WAIT_S):
        raise TimeoutError("turn %s: no turn/completed in %ss" % (tid, TURN_WAIT_S))
    return tid, time.monotonic() - t0


def write_config(home, port, approval="untrusted"):
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write('model = "mock-model"\napproval_policy = "%s"\n'
                'sandbox_mode = "workspace-write"\nmodel_provider = "mock_provider"\n\n'
                '[model_providers.mock_provider]\nname = "Mock provider for soak"\n'
                'base_url = "http://127.0.0.1:%d/v1"\nwire_api = "responses"\n'
                'request_max_retries = 0\nstream_max_retries = 0\n' % (approval, port))


# -- the checks on disk and through the index ----------------------------------------------

def check_rollouts(home, stats, folder="sessions"):
    """Problems in the rollout files under home/folder (list of strings); counts go to stats."""
    bad = []
    ids = set()
    for root, _, files in os.walk(os.path.join(home, folder)):
        for name in files:
            if not name.endswith(".jsonl"):
                continue
            ids.add(name[-len("00000000-0000-0000-0000-000000000000.jsonl"):-len(".jsonl")])
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                data = f.read()
            stats["files_checked"] += 1
            lines = data.split(b"\n")
            tail = lines.pop()  # b"" when the file ends with a newline
            for i, line in enumerate(lines):
                try:
                    ok = isinstance(json.loads(line), dict)
                except ValueError:
                    ok = False
                if not ok:
                    bad.append("%s line %d is not a JSON object: %.120r" % (name, i + 1, line))
            stats["lines_checked"] += len(lines)
            if tail:
                stats["partial_last_lines"] += 1
    return bad, ids


def rollout_path(home, thread_id):
    for root, _, files in os.walk(os.path.join(home, "sessions")):
        for name in files:
            if name.endswith(thread_id + ".jsonl"):
                return os.path.join(root, name)
    return None


def tear(path, rng):
    """Append a prefix of the file's last record without its newline: what a crash in the
    middle of a write(2) leaves (a kill -9 alone rarely does: a record is one write). False
    when the file already ends torn."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.endswith(b"\n"):
        return False
    last = data[:-1].rsplit(b"\n", 1)[-1]
    with open(path, "ab") as f:
        f.write(last[:rng.randint(1, len(last) - 1)])
    return True


def listed_ids(c, archived=False):
    out, cursor = [], None
    while True:
        p = {"limit": 100, "modelProviders": [], "sourceKinds": SOURCE_KINDS}
        if archived:
            p["archived"] = True
        if cursor:
            p["cursor"] = cursor
        r = c.result("thread/list", p, 30)
        out += [t["id"] for t in r["data"]]
        cursor = r.get("nextCursor")
        if not cursor:
            return out


def check_history(c, turns, thread_id, stats, cut=False):
    """Turns completed (turn/completed seen) of a thread missing, or missing items."""
    r = c.result("thread/read", {"threadId": thread_id, "includeTurns": True}, 60)
    have = {t["id"]: t for t in r["thread"]["turns"]}
    bad = []
    with turns.lock:
        mine = [tid for tid in turns.completed if turns.owner.get(tid) == thread_id]
        want = {tid: (turns.status[tid], dict(turns.items.get(tid, {}))) for tid in mine}
    with turns.lock:  # turns cut by a kill: their items whose item/completed was seen (info)
        cut = {} if not cut else {
            tid: dict(turns.items.get(tid, {})) for tid, th in turns.owner.items()
            if th == thread_id and tid not in turns.completed}
    for tid, items in cut.items():
        got = {it["id"] for it in have.get(tid, {}).get("items", [])}
        stats["cut_turn_items_seen"] += len(items)
        lost = [i for i in items if i not in got]
        stats["cut_turn_items_lost"] += len(lost)
    for tid, (status, items) in want.items():
        t = have.get(tid)
        if t is None:
            bad.append("turn %s (completed, %s) missing from thread %s" % (tid, status, thread_id))
            continue
        if t["status"] != status:
            bad.append("turn %s: status %s on disk, %s when it completed" % (
                tid, t["status"], status))
        got = {it["id"] for it in t["items"]}
        lost = [i for i in items if i not in got]
        if lost:
            bad.append("turn %s: items %s missing" % (tid, lost))
        stats["turns_verified"] += 1
        stats["items_verified"] += len(items)
    return bad, have


# -- the phases ----------------------------------------------------------------------------

def phase_a(a, c, turns, thread_ids):
    """a.turns turns spread over the threads, one at a time per thread, threads side by side."""
    durations = []
    errors = []
    per = [a.turns // len(thread_ids) + (1 if i < a.turns % len(thread_ids) else 0)
           for i in range(len(thread_ids))]

    def worker(i):
        for k in range(per[i]):
            try:
                tid, s = run_turn(c, turns, thread_ids[i], k)
                with turns.lock:
                    turns.owner[tid] = thread_ids[i]
                durations.append(s)
            except Exception as e:
                errors.append("%s: %s" % (type(e).__name__, e))
                return

    ws = [threading.Thread(target=worker, args=(i,)) for i in range(len(thread_ids))]
    for w in ws:
        w.start()
    for w in ws:
        w.join()
    time.sleep(1)  # a late second turn/completed would come now
    return durations, errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--turns", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2,
                    help="phase A rounds, each on new threads unloaded at its end")
    ap.add_argument("--kills", type=int, default=200)
    ap.add_argument("--tear", type=float, default=0.25,
                    help="share of kills after which the thread's rollout gets a torn tail")
    ap.add_argument("--rss-slack-kib", type=int, default=4096)
    a, seed, rng, tmp = soaklib.parse_args(ap, "turn_soak")
    home, ws = os.path.join(tmp, "home"), os.path.join(tmp, "ws")
    os.mkdir(home)
    os.mkdir(ws)
    print("turn_soak: %d turns on %d threads, %d kills, seed %d; %s" % (
        a.turns, a.threads, a.kills, seed, soaklib.machine()), flush=True)
    mock = Mock(a.bin, tmp, a.turns + a.kills + 2 * a.threads + 10)
    write_config(home, mock.port)
    turns = Turns(rng)
    turns.owner = {}
    ch = soaklib.Checks()

    def spawn():
        c = soaklib.Conn(a.bin, home=home, stderr_path=os.path.join(tmp, "stderr.log"),
                         env={"APP_SERVER_THREAD_IDLE_SECS": "1"},
                         on_notification=turns.on_notification,
                         on_server_request=turns.on_server_request)
        c.initialize("turn_soak")
        return c

    # -- phase A -----------------------------------------------------------------------
    c = spawn()

    def new_threads():
        out = []
        for _ in range(a.threads):
            r = c.result("thread/start", {"cwd": ws, "approvalPolicy": "untrusted",
                                          "sandbox": "workspace-write"})
            out.append(r["thread"]["id"])
        return out

    def unload(ids):
        """Unsubscribe (APP_SERVER_THREAD_IDLE_SECS=1): the threads unload, thread/closed."""
        for t in ids:
            c.result("thread/unsubscribe", {"threadId": t})
        ok = all(turns.closed_ev(t).wait(15) for t in ids)
        soaklib.settle(c.pid)
        return ok

    thread_ids = new_threads()
    # warm-up: two turns per thread side by side, so libcurl is loaded, its connection
    # cache and the daemon's pool of cgroups are filled before the baseline; then unloaded
    _, errors = phase_a(argparse.Namespace(turns=2 * a.threads), c, turns, thread_ids)
    if errors:
        print("warm-up: %s" % errors[:3])
    unload(thread_ids)
    all_threads = list(thread_ids)
    base = soaklib.snapshot(c.pid)
    base_fds = soaklib.fd_kinds(c.pid)
    print("phase A start (after %d warm-up turns, threads unloaded): %s" % (2 * a.threads,
                                                          soaklib.fmt_snap(base)), flush=True)
    durations, errors, loaded, unloaded, closed = [], [], [], [], True
    t0 = time.monotonic()
    for rnd in range(a.rounds):
        thread_ids = new_threads()
        n = a.turns // a.rounds + (1 if rnd < a.turns % a.rounds else 0)
        d, e = phase_a(argparse.Namespace(turns=n), c, turns, thread_ids)
        durations += d
        errors += e
        soaklib.settle(c.pid)
        loaded.append(soaklib.snapshot(c.pid))
        closed = unload(thread_ids) and closed
        unloaded.append(soaklib.snapshot(c.pid))
        if rnd == 0:
            round1_fds = soaklib.fd_kinds(c.pid)
        all_threads += thread_ids
        print("phase A round %d: %d turns on %d threads; loaded: %s; unloaded: RSS %.2f MiB, "
              "fds %d" % (rnd + 1, len(d), len(thread_ids), soaklib.fmt_snap(loaded[-1]),
                          unloaded[-1]["rss_kib"] / 1024, unloaded[-1]["fds"]), flush=True)
    a_s = time.monotonic() - t0
    after_fds = soaklib.fd_kinds(c.pid)
    med = statistics.median(durations) if durations else 0.5
    print("phase A end (%.1f s, %.1f turns/s, turn median %.0f ms, p95 %.0f ms)" % (
        a_s, len(durations) / a_s, med * 1000,
        (sorted(durations)[int(len(durations) * 0.95)] if durations else 0) * 1000), flush=True)
    with turns.lock:
        statuses = {}
        for tid, s in turns.status.items():
            statuses[s] = statuses.get(s, 0) + 1
        ncompleted = len(turns.completed)
        multi = [t for t, n in turns.completed.items() if n != 1]
    ch.check("phase A: %d turns run, %d errors" % (len(durations), len(errors)),
             not errors and len(durations) == a.turns, "; ".join(errors[:3]))
    ch.check("phase A: exactly one turn/completed per turn (%d turns, statuses %s)" % (
        ncompleted, statuses), not multi and not turns.late, "%s" % multi[:5])
    ch.check("phase A: items started/completed once each (%d items)" % len(turns.item_state),
             not turns.item_errors and all(v == "completed" for v in turns.item_state.values()),
             "; ".join(turns.item_errors[:3]))
    with turns.lock:
        cmd_items = sum(1 for it in turns.items.values() for t in it.values()
                        if t == "commandExecution")
        unresolved = dict(turns.asked)
    ch.check("phase A: approvals %s, %d command items, every request resolved" % (
        turns.decisions, cmd_items), not unresolved, "%s" % list(unresolved.items())[:5])
    ch.check("phase A: requests answered exactly once", not c.unanswered() and not c.errors
             and not c.unknown_answers, "; ".join(c.errors[:3]))
    z = max(x["zombies"] for x in loaded + unloaded)
    kids = max(x["children"] for x in loaded + unloaded)
    ch.check("phase A: zombies %d, children %d after each round" % (z, kids),
             z == 0 and kids == 0)
    extra = soaklib.fd_diff(base_fds, after_fds, sockets=True)
    ch.check("phase A: fds %d at end, %d at start (threads unloaded): equal but for the "
             "cgroup pool (<= %d) and libcurl's connection cache" % (
                 unloaded[-1]["fds"], base["fds"], soaklib.CGROUP_POOL), not extra,
             "kinds that differ (start, end): %s" % extra if extra else "")
    extra = soaklib.fd_diff(round1_fds, after_fds, sockets=True)
    socks = [sum(n for k, n in f.items() if k.startswith("socket:"))
             for f in (base_fds, round1_fds, after_fds)]
    ch.check("phase A: fds %d after round 1, %d after round %d: equal but for the cgroup "
             "pool and sockets (%s at start, round 1, end; <= 4 x --threads)" % (
                 unloaded[0]["fds"], unloaded[-1]["fds"], a.rounds, socks),
             not extra and max(socks) <= 4 * a.threads,
             "kinds that differ: %s" % extra if extra else "")
    ch.check("phase A: every thread unloaded after its round (thread/closed)", closed)
    if os.environ.get("APP_SERVER_SANITIZED"):
        print("note  phase A: RSS not checked (APP_SERVER_SANITIZED: ASan's quarantine)")
    else:
        worst = max(s["rss_kib"] for s in loaded)
        ch.check("phase A: RSS with a round's threads loaded %.2f MiB <= %.2f MiB at start "
                 "+ %.1f MiB" % (worst / 1024, base["rss_kib"] / 1024, a.rss_slack_kib / 1024),
                 worst <= base["rss_kib"] + a.rss_slack_kib,
                 "growth %d KiB" % (worst - base["rss_kib"]))
        if a.rounds > 1:
            grow = unloaded[-1]["rss_kib"] - unloaded[0]["rss_kib"]
            ch.check("phase A: RSS with the threads unloaded: %.2f MiB after round 1, %.2f MiB "
                     "after round %d (<= + 1 MiB: nothing kept per turn)" % (
                         unloaded[0]["rss_kib"] / 1024, unloaded[-1]["rss_kib"] / 1024,
                         a.rounds), grow <= 1024, "growth %d KiB" % grow)
    thread_ids = all_threads
    c.result("thread/resume", {"threadId": thread_ids[0]})
    # one thread alone: the turn time phase B's random kill delays are drawn against
    solo = [run_turn(c, turns, thread_ids[0], 10000 + i) for i in range(8)]
    for tid, _ in solo:
        turns.owner[tid] = thread_ids[0]
    solo_med = statistics.median(s for _, s in solo)
    rc = c.close()
    ch.check("phase A: exit status 0 on stdin EOF", rc == 0, "got %r" % rc)

    # -- phase B -----------------------------------------------------------------------
    stats = {"files_checked": 0, "lines_checked": 0, "partial_last_lines": 0,
             "turns_verified": 0, "items_verified": 0, "cut_turn_items_seen": 0,
             "cut_turn_items_lost": 0, "torn_tails_made": 0}
    landed = {}
    delays = []
    killed = []
    torn = set()
    next_thread = None
    final = {}
    bad_all, kills, resumes, after_end = [], 0, 0, 0
    max_delay = solo_med / 2
    t0 = time.monotonic()
    for k in range(a.kills + 1):
        thread_id = next_thread or rng.choice(thread_ids)
        next_thread = None
        c = spawn()
        try:
            r = c.result("thread/resume", {"threadId": thread_id}, 30)
            ok = r["thread"]["id"] == thread_id
            resumes += ok
            if not ok:
                bad_all.append("kill %d: resume answered thread %s" % (k, r["thread"]["id"]))
        except Exception as e:
            bad_all.append("kill %d: thread/resume failed: %s" % (k, e))
        bad, file_ids = check_rollouts(home, stats)
        bad_all += ["kill %d: %s" % (k, b) for b in bad]
        # nothing lost: the resumed thread on every round, every thread on the first and last
        for t in (thread_ids if k in (0, a.kills) else [thread_id]):
            bad, have = check_history(c, turns, t, stats, cut=k == a.kills)
            bad_all += ["kill %d: %s" % (k, b) for b in bad]
            if k == a.kills:
                for turn in have.values():
                    final[turn["status"]] = final.get(turn["status"], 0) + 1
        lst = listed_ids(c)
        if sorted(lst) != sorted(file_ids) or len(set(lst)) != len(lst):
            time.sleep(1.0)
            lst2 = listed_ids(c)
            bad_all.append("kill %d: thread/list %d ids, files %d ids (missing %s, extra %s); "
                           "after 1 s: %s" % (k, len(lst), len(file_ids),
                                              sorted(set(file_ids) - set(lst)),
                                              sorted(set(lst) - set(file_ids)),
                                              "consistent" if sorted(lst2) == sorted(file_ids)
                                              else "still not"))
        if k == a.kills:
            rc = c.close()
            ch.check("phase B: last daemon exits 0 on stdin EOF", rc == 0, "got %r" % rc)
            break
        # a turn, killed at a random moment
        try:
            r = c.result("turn/start", {"threadId": thread_id, "input": text("kill %d" % k)}, 30)
            tid = r["turn"]["id"]
            with turns.lock:
                turns.owner[tid] = thread_id
                turns.last[thread_id] = "turn/start answered"
        except Exception as e:
            bad_all.append("kill %d: turn/start failed: %s" % (k, e))
            tid = None
        delay = rng.uniform(0, max_delay)
        delays.append(delay)
        time.sleep(delay)
        with turns.lock:
            where = turns.last.get(thread_id, "?")
        c.kill9()
        killed.append(c.pid)
        kills += 1
        turns.forget_conn(c.pid)
        if tid is not None and turns.event(tid).is_set():
            after_end += 1
            where = "after turn/completed"
            max_delay *= 0.9   # aim at ~1 kill in 5 after the end, the rest mid-turn
        else:
            max_delay *= 1.03
        landed[where] = landed.get(where, 0) + 1
        bad, _ = check_rollouts(home, stats)  # before any daemon repairs a torn tail
        bad_all += ["kill %d (before restart): %s" % (k, b) for b in bad]
        if rng.random() < a.tear:
            path = rollout_path(home, thread_id)
            if path is not None and tear(path, rng):
                torn.add(path)
                stats["torn_tails_made"] += 1
                if rng.random() < 0.5:  # half the time the next round appends to it
                    next_thread = thread_id
    b_s = time.monotonic() - t0
    print("phase B (%.1f s): %d kills (%d after the turn had completed), %d resumes; "
          "kill delays %.0f .. %.0f ms (median %.0f)" % (
              b_s, kills, after_end, resumes, min(delays or [0]) * 1000,
              max(delays or [0]) * 1000, statistics.median(delays or [0]) * 1000), flush=True)
    print("phase B: where the kills landed (last notification of the thread): %s" % (
        ", ".join("%s %d" % kv for kv in sorted(landed.items(), key=lambda kv: -kv[1]))),
        flush=True)
    print("phase B: %s" % ", ".join("%s %d" % kv for kv in stats.items()), flush=True)
    print("phase B: turns of the %d threads at the end, by status: %s" % (
        len(thread_ids), final), flush=True)
    still = 0
    for path in torn:
        with open(path, "rb") as f:
            still += not f.read().endswith(b"\n")
    print("phase B: torn tails made %d in %d files; %d files appended to since (tail cut, "
          "every line whole), %d still torn (thread not resumed since)" % (
              stats["torn_tails_made"], len(torn), len(torn) - still, still), flush=True)
    # A killed daemon's forked children die with it (a parent-death signal) and wait, as
    # zombies, for init to reap them: only a live one would be a process left behind.
    time.sleep(1)
    left = soaklib.in_cgroups_of(killed)
    live = [p for p in left if soaklib.state(p) not in ("Z", "")]
    ch.check("phase B: no live process left in the killed daemons' command cgroups "
             "(%d zombies awaiting init)" % (len(left) - len(live)), not live,
             "%s" % [soaklib.describe(p) for p in live[:5]])
    ch.check("phase B: %d kills, %d restarts resumed their thread" % (kills, resumes),
             resumes == a.kills + 1)
    ch.check("phase B: rollouts readable, nothing lost, index == files", not bad_all,
             "%d problems; %s" % (len(bad_all), "; ".join(bad_all[:5])))
    ch.check("phase B: no turn completed twice", not turns.late, "%s" % turns.late[:5])
    ch.check("phase B: items started/completed once each", not turns.item_errors,
             "; ".join(turns.item_errors[:3]))
    ch.check("mock model exits 0", mock.stop() == 0)
    return soaklib.finish(ch, tmp, "stderr.log", "mock.log")


if __name__ == "__main__":
    sys.exit(main())
