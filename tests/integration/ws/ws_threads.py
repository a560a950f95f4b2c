#!/usr/bin/env python3
"""Threads shared between WebSocket connections (issue 27), for test_ws_threads.c: two clients on one
thread against the mock model, checked as upstream 0.169 behaves (recorded in
docs/transports.md): every subscriber sees every event of the thread, each gets the approval
(under its own connection's id) and either may answer it, and the turn survives the
disconnect of any subscriber, the one that started it included; and the daemon's exit while a
turn's sandboxed command runs.

usage: ws_threads.py CASE --addr ws://127.0.0.1:PORT --workspace DIR [--sandbox MODE] [--pid PID]
Exit 0 when the case holds; otherwise a message on stderr and exit 1.
"""
import argparse
import os
import signal
import socket
import struct
import sys
import time
import types

import ws_check
from ws_check import fail

ARGS = None


class Client(ws_check.Conn):
    def __init__(self, name):
        super().__init__()
        self.name = name
        self.next_id = 100
        self.seen = []  # every message, in order

    def message(self):
        m = super().message()
        self.seen.append(m)
        return m

    def call(self, method, params):
        self.next_id += 1
        self.text({"id": self.next_id, "method": method, "params": params})
        m = self.answer(self.next_id)
        if "result" not in m:
            fail("%s: %s: %r" % (self.name, method, m))
        return m["result"]

    def until(self, method):
        """Messages up to the first one of method (included)."""
        out = []
        while True:
            m = self.message()
            out.append(m)
            if m.get("method") == method:
                return out

    def drop(self):
        """Go without a close frame, as a client that crashed or lost its network."""
        self.s.shutdown(socket.SHUT_RDWR)
        self.s.close()


def text(t):
    return [{"type": "text", "text": t, "text_elements": []}]


def setup():
    """A starts a thread and runs a first turn (the rollout exists then), B resumes it."""
    a, b = Client("A"), Client("B")
    a.init()
    b.init()
    tid = a.call("thread/start", {"cwd": ARGS.workspace, "approvalPolicy": "untrusted",
                                  "sandbox": "danger-full-access"})["thread"]["id"]
    a.call("turn/start", {"threadId": tid, "input": text("first")})
    a.until("turn/completed")
    b.call("thread/resume", {"threadId": tid})
    a.seen.clear()
    b.seen.clear()
    return a, b, tid


def thread_events(msgs, tid):
    """(method, itemId/turn status) of the thread's notifications, in order."""
    out = []
    for m in msgs:
        p = m.get("params") or {}
        if "method" not in m or p.get("threadId") != tid:
            continue
        if m["method"] == "serverRequest/resolved" or "id" in m:
            continue  # ids are each connection's own
        key = (p.get("item") or {}).get("id") or (p.get("turn") or {}).get("status") or p.get("itemId")
        out.append((m["method"], key))
    return out


def completed(msgs):
    t = [m for m in msgs if m.get("method") == "turn/completed"]
    if len(t) != 1:
        fail("%d turn/completed" % len(t))
    return t[0]["params"]["turn"]


def approval(msgs):
    r = [m for m in msgs if m.get("method") == "item/commandExecution/requestApproval"]
    if len(r) != 1:
        fail("%d approval requests: %r" % (len(r), msgs[-3:]))
    return r[0]


def case_share():
    """both see every event; the approval reaches both; B, who did not start the turn, answers"""
    a, b, tid = setup()
    a.call("turn/start", {"threadId": tid, "input": text("go")})
    qa = approval(a.until("item/commandExecution/requestApproval"))
    qb = approval(b.until("item/commandExecution/requestApproval"))
    if qa["params"] != qb["params"]:
        fail("the two copies differ: %r / %r" % (qa["params"], qb["params"]))
    b.text({"id": qb["id"], "result": {"decision": "accept"}})
    a.until("turn/completed")
    b.until("turn/completed")
    for c, q in ((a, qa), (b, qb)):
        res = [m["params"] for m in c.seen if m.get("method") == "serverRequest/resolved"]
        if res != [{"threadId": tid, "requestId": q["id"]}]:
            fail("%s: serverRequest/resolved %r for its request %r" % (c.name, res, q["id"]))
        if completed(c.seen)["status"] != "completed":
            fail("%s: turn %r" % (c.name, completed(c.seen)))
    ea, eb = thread_events(a.seen, tid), thread_events(b.seen, tid)
    if ea != eb or len(ea) < 8:
        fail("the two connections saw different events:\nA %r\nB %r" % (ea, eb))
    if not os.path.exists(os.path.join(ARGS.workspace, "a.txt")):
        fail("the approved command did not run")


def case_drop_other():
    """B, subscribed, goes mid-turn: A's turn goes on to its end"""
    a, b, tid = setup()
    a.call("turn/start", {"threadId": tid, "input": text("slow")})
    b.until("turn/started")
    b.drop()
    turn = completed(a.until("turn/completed"))
    msgs = [m for m in a.seen if m.get("method") == "item/completed"]
    if turn["status"] != "completed" or not any(
            (m["params"]["item"].get("text") or "") == "slow answer" for m in msgs):
        fail("A's turn after B went: %r" % turn)


def case_drop_starter():
    """A starts a turn and goes while its approval waits: B answers, the turn completes for B;
    once nobody is subscribed the thread unloads"""
    a, b, tid = setup()
    a.call("turn/start", {"threadId": tid, "input": text("go")})
    approval(a.until("item/commandExecution/requestApproval"))
    qb = approval(b.until("item/commandExecution/requestApproval"))
    a.drop()
    b.text({"id": qb["id"], "result": {"decision": "accept"}})
    turn = completed(b.until("turn/completed"))
    if turn["status"] != "completed":
        fail("B's turn after A went: %r" % turn)
    if not os.path.exists(os.path.join(ARGS.workspace, "a.txt")):
        fail("the command B approved did not run: %r" % [
            (m["params"]["item"].get("exitCode"), m["params"]["item"].get("aggregatedOutput"), m["params"]["item"].get("durationMs")) for m in b.seen if m.get("method") == "item/completed" and m["params"]["item"].get("id") == "c1"])
    b.drop()
    c = Client("C")
    c.init()
    for _ in range(50):
        if c.call("thread/loaded/list", {})["data"] == []:
            return
        time.sleep(0.05)
    fail("the thread stayed loaded with nobody subscribed")


def resume_pending(answerer):
    """A's turn waits on an approval when B resumes the thread: B gets the request after
    its thread/resume answer, under its own id (upstream 0.169 replays pending requests to a
    connection that attaches); the first answer (answerer's) wins, serverRequest/resolved
    goes to both with each one's id, and the turn completes"""
    a, b = Client("A"), Client("B")
    a.init()
    tid = a.call("thread/start", {"cwd": ARGS.workspace, "approvalPolicy": "untrusted",
                                  "sandbox": "danger-full-access"})["thread"]["id"]
    a.call("turn/start", {"threadId": tid, "input": text("first")})
    a.until("turn/completed")
    a.seen.clear()
    a.call("turn/start", {"threadId": tid, "input": text("go")})
    qa = approval(a.until("item/commandExecution/requestApproval"))
    b.init()
    b.next_id += 1
    b.text({"id": b.next_id, "method": "thread/resume", "params": {"threadId": tid}})
    resumed = b.answer(b.next_id)
    if "result" not in resumed:
        fail("B: thread/resume: %r" % resumed)
    b.seen.clear()
    qb = approval(b.until("item/commandExecution/requestApproval"))
    if qb["params"] != qa["params"]:
        fail("the replayed copy differs: %r / %r" % (qa["params"], qb["params"]))
    who, q = (a, qa) if answerer == "A" else (b, qb)
    who.text({"id": q["id"], "result": {"decision": "accept"}})
    a.until("turn/completed")
    b.until("turn/completed")
    for c, q in ((a, qa), (b, qb)):
        res = [m["params"] for m in c.seen if m.get("method") == "serverRequest/resolved"]
        if res != [{"threadId": tid, "requestId": q["id"]}]:
            fail("%s: serverRequest/resolved %r for its request %r" % (c.name, res, q["id"]))
        if completed(c.seen)["status"] != "completed":
            fail("%s: turn %r" % (c.name, completed(c.seen)))
    if len([m for m in b.seen if m.get("method") == "item/commandExecution/requestApproval"]) != 1:
        fail("B got the request more than once")
    if not os.path.exists(os.path.join(ARGS.workspace, "a.txt")):
        fail("the approved command did not run")


def case_resume_pending():
    """B resumes while A's approval waits, and B answers it"""
    resume_pending("B")


def case_resume_pending_starter():
    """B resumes while A's approval waits, and A (who got it first) answers it"""
    resume_pending("A")


def case_sigterm():
    """A's turn runs a command in its sandbox (--sandbox) when the daemon (--pid) gets SIGTERM:
    the connection is closed with 1001 (test_ws_threads.c then checks the daemon's exit, the
    workspace and the processes)"""
    a = Client("A")
    a.init()
    tid = a.call("thread/start", {"cwd": ARGS.workspace, "approvalPolicy": "never",
                                  "sandbox": ARGS.sandbox})["thread"]["id"]
    a.call("turn/start", {"threadId": tid, "input": text("sleep")})
    while True:
        m = a.message()
        if m.get("method") == "item/started" and m["params"]["item"]["type"] == "commandExecution":
            break
    # the sandbox is up once its placeholder for the workspace's .git is on the host
    deadline = time.monotonic() + 10
    while not os.path.lexists(os.path.join(ARGS.workspace, ".git")):
        if time.monotonic() > deadline:
            fail("no placeholder for .git in the workspace while the command runs")
        time.sleep(0.02)
    time.sleep(0.2)
    print("sigterm_at %.6f" % time.monotonic(), flush=True)  # CLOCK_MONOTONIC, as the test's
    os.kill(ARGS.pid, signal.SIGTERM)
    while True:  # the server's close frame, answered as a client does
        fin, op, p = a.frame()
        if op == 8:
            break
    if p[:2] != struct.pack(">H", 1001):
        fail("close %r, expected 1001" % p)
    a.send(8, struct.pack(">H", 1000))
    a.expect_eof()


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--addr", required=True)
    ap.add_argument("--workspace", required=True)
    ap.add_argument("--sandbox", default="danger-full-access")
    ap.add_argument("--pid", type=int, default=0)
    ARGS = ap.parse_args()
    ws_check.ARGS = types.SimpleNamespace(addr=ARGS.addr, proxy=None, token=None)
    try:
        CASES[ARGS.case]()
    except (AssertionError, OSError, ValueError, KeyError) as e:
        print("ws_threads %s: %s: %s" % (ARGS.case, type(e).__name__, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
