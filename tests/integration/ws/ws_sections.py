#!/usr/bin/env python3
"""thread/section/changed and thread/attachment/updated reach every connection, for
test_thread_sections.c: two WebSocket clients, A with a thread and a section, B subscribed to
nothing. A's move is answered {} and then both hear thread/section/changed {threadId,
sectionId}; B's move out of the section the same with sectionId null. A's attachment is
answered and both hear thread/attachment/updated (created); B's removal the same (deleted).
As upstream 0.169 does over its own --listen ws:// (checked by hand, docs/threads.md).

usage: ws_sections.py --addr ws://127.0.0.1:PORT --workspace DIR
Exit 0 when it holds; otherwise a message on stderr and exit 1.
"""
import argparse
import socket
import sys

import ws_check
from ws_check import fail


class Client(ws_check.Conn):
    def __init__(self, name):
        super().__init__()
        self.name = name
        self.next_id = 100

    def call(self, method, params):
        self.next_id += 1
        self.text({"id": self.next_id, "method": method, "params": params})
        m = self.answer(self.next_id)
        if "result" not in m:
            fail("%s: %s: %r" % (self.name, method, m))
        return m["result"]

    def changed(self, method="thread/section/changed"):
        """The notifications of method up to a round trip's answer."""
        self.next_id += 1
        self.text({"id": self.next_id, "method": "sections/sync", "params": {}})
        out = []
        while True:
            m = self.message()
            if m.get("id") == self.next_id and "method" not in m:
                return out
            if m.get("method") == method:
                out.append(m["params"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", required=True)
    ap.add_argument("--workspace", required=True)
    ws_check.ARGS = ap.parse_args()
    ws_check.ARGS.proxy = ws_check.ARGS.token = None
    a, b = Client("A"), Client("B")
    for c in (a, b):
        c.init()
        c.text({"method": "initialized"})
    section = a.call("threadSection/create", {"name": "S"})["section"]["id"]
    thread = a.call("thread/start", {"cwd": ws_check.ARGS.workspace})["thread"]["id"]
    for mover, target in ((a, section), (b, None)):
        if mover.call("thread/section/move", {"threadId": thread, "sectionId": target}) != {}:
            fail("%s: the move's answer is not {}" % mover.name)
        want = [{"threadId": thread, "sectionId": target}]
        for c in (a, b):
            got = c.changed()
            if got != want:
                fail("%s after %s's move: %r, want %r" % (c.name, mover.name, got, want))
    if b.call("thread/read", {"threadId": thread})["thread"]["section"] is not None:
        fail("the thread is still in a section")
    ident = {"threadId": thread, "attachmentType": "pr", "identityKey": "k"}
    att = a.call("thread/attachment/add", dict(ident, payload={"n": 1}))["attachment"]["id"]
    for mover, method, op in ((a, None, "created"), (b, "thread/attachment/remove", "deleted")):
        if method is not None and mover.call(method, ident) != {}:
            fail("%s: the removal's answer is not {}" % mover.name)
        want = [dict(ident, attachmentId=att, operation=op)]
        for c in (a, b):
            got = c.changed("thread/attachment/updated")
            if got != want:
                fail("%s after %s's %s: %r, want %r" % (c.name, mover.name, op, got, want))


try:
    main()
except (AssertionError, OSError, socket.timeout) as e:
    print(e, file=sys.stderr)
    sys.exit(1)
