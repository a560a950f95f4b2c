#!/usr/bin/env python3
"""Input soak: --mb MB of hostile input lines with well-formed requests among them.

Line kinds: well-formed requests with known ids (config/read, model/list, fs/getMetadata,
thread/loaded/list, an unknown method, params that fail the schema, a short command/exec,
some with "jsonrpc" and a CRLF ending, string and integer ids), and between them random bytes,
truncated requests, requests with invalid UTF-8, deep nesting (arrays, objects, inside params),
JSON that is not an object, bad ids (null, fractional, too big), NUL bytes, blank lines, and
huge lines (random text, or a request with a path of megabytes) on both sides of the daemon's
--max-line-bytes (4 MiB here, so both sides fit in the budget; 0 = the daemon's default).

Pass: every well-formed request is answered exactly once, by its id, with the expected kind of
answer (result, or its error code); answers to malformed lines carry id null or one of the
malformed lines' own ids; every output line is a JSON object; the daemon answers a final
request and exits 0 on stdin EOF.

usage: tests/soak/input_soak.py [--mb 100] [--max-line-bytes 4194304] [--seed S] [--bin PATH]
"""
import argparse
import json
import os
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soaklib  # noqa: E402

MiB = 1 << 20


class Gen:
    """Lines and what each well-formed one must get."""

    def __init__(self, rng, conn, max_line):
        self.rng = rng
        self.c = conn
        self.max_line = max_line
        self.n = 0
        self.counts = {}
        self.expected = {}   # key -> "result" or error code
        self.wrong = []
        self.lock = threading.Lock()
        self.bad_kind = {}   # id of a malformed line -> its kind
        self.new_bad = []

    def count(self, kind, nbytes):
        for i in self.new_bad:
            self.bad_kind[i] = kind
        self.new_bad = []
        c = self.counts.setdefault(kind, [0, 0])
        c[0] += 1
        c[1] += nbytes

    def valid_id(self):
        self.n += 1
        return self.n + 1000000 if self.rng.random() < 0.5 else "v-%d-\u00e9\u4e2d" % self.n

    def bad_id(self):
        self.n += 1
        self.new_bad.append("x-%d" % self.n)
        return "x-%d" % self.n

    def check(self, want, msg):
        got = "result" if "result" in msg else msg.get("error", {}).get("code")
        if got != want:
            with self.lock:
                self.wrong.append("id %r: want %s, got %.200s" % (msg.get("id"), want, msg))

    def valid(self):
        """A well-formed request (dict) and the kind of answer it must get."""
        r = self.rng.random()
        if r < 0.25:
            m, p, want = "config/read", {}, "result"
        elif r < 0.40:
            m, p, want = "model/list", {"limit": 2}, "result"
        elif r < 0.55:
            m, p, want = "fs/getMetadata", {"path": "/"}, "result"
        elif r < 0.65:
            m, p, want = "thread/loaded/list", {}, "result"
        elif r < 0.78:
            m, p, want = "no/such/method", {}, -32601
        elif r < 0.93:
            m, p, want = "command/exec", {"command": "ls"}, -32602
        elif r < 0.98:
            m, p, want = "fs/getMetadata", {"path": "relative/path"}, None  # any error
        else:
            m, p, want = "command/exec", {"command": ["true"],
                                          "sandboxPolicy": {"type": "dangerFullAccess"}}, "result"
        return {"id": self.valid_id(), "method": m, "params": p}, want

    def send_valid(self, req, want, line):
        def cb(msg, want=want):
            if want is None:
                if "error" not in msg:
                    with self.lock:
                        self.wrong.append("id %r: want an error, got %.200s" % (msg["id"], msg))
            else:
                self.check(want, msg)
        self.c.expect(req["id"], req["method"], cb)
        return line

    def line(self):
        """The next normal (not huge) line, as bytes with its newline."""
        rng = self.rng
        r = rng.random()
        if r < 0.40:
            req, want = self.valid()
            if rng.random() < 0.2:
                req["jsonrpc"] = "2.0"
                line = json.dumps(req, ensure_ascii=False).encode() + b"\r\n"
            else:
                line = json.dumps(req, ensure_ascii=False).encode() + b"\n"
            self.count("well-formed request", len(line))
            return self.send_valid(req, want, line)
        if r < 0.58:
            b = rng.randbytes(rng.randint(1, 4096)).replace(b"\n", b" ")
            self.count("random bytes", len(b) + 1)
            return b + b"\n"
        if r < 0.72:
            req, _ = self.valid()
            req["id"] = self.bad_id()
            full = json.dumps(req).encode()
            b = full[:rng.randint(1, len(full) - 1)]
            self.count("truncated request", len(b) + 1)
            return b + b"\n"
        if r < 0.77:
            req, _ = self.valid()
            req["id"] = self.bad_id()
            s = json.dumps(req).encode()
            bad = rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
                              b"\xe2\x82", b"\xc0\xaf", b"\xfe\xfe"])
            b = s[:-1] + b',"x":"a' + bad + b'z"}'
            self.count("invalid UTF-8", len(b) + 1)
            return b + b"\n"
        if r < 0.79:
            depth = rng.choice([100, 1000, 5000, 30000])
            k = rng.random()
            if k < 0.4:
                b = b"[" * depth + b"]" * depth
            elif k < 0.7:
                b = b'{"a":' * depth + b"1" + b"}" * depth
            else:
                b = (b'{"id":"%s","method":"config/read","params":{"x":' % self.bad_id().encode()
                     + b"[" * depth + b"]" * depth + b"}}")
            self.count("deep nesting", len(b) + 1)
            return b + b"\n"
        if r < 0.84:
            b = rng.choice([b"[]", b"[1,2]", b'[{"id":1,"method":"config/read"}]', b"42",
                            b'"str"', b"null", b"true", b"-1e400", b"{}",
                            b'{"id":"%s"}' % self.bad_id().encode(),
                            b'{"method":5,"id":"%s"}' % self.bad_id().encode()])
            self.count("JSON not a request", len(b) + 1)
            return b + b"\n"
        if r < 0.89:
            b = rng.choice([b'{"id":null,"method":"config/read","params":{}}',
                            b'{"id":1.5,"method":"config/read","params":{}}',
                            b'{"id":true,"method":"config/read"}',
                            b'{"id":{"a":1},"method":"config/read"}',
                            b'{"id":99999999999999999999999,"method":"config/read"}',
                            b'{"id":1,"method":"config/read","params":{"n":1e999999}}',
                            b'{"id":"%s","id":"%s","method":"x"}' % (
                                self.bad_id().encode(), self.bad_id().encode())])
            self.count("bad id", len(b) + 1)
            return b + b"\n"
        if r < 0.94:
            b = rng.randbytes(rng.randint(1, 300)).replace(b"\n", b" ")
            pos = rng.randint(0, len(b))
            b = b[:pos] + b"\0" * rng.randint(1, 4) + b[pos:]
            if rng.random() < 0.5:
                b = b'{"id":"%s","method":"config/read","params":{}}' % self.bad_id().encode()
                b = b[:10] + b"\0" + b[10:]
            self.count("NUL bytes", len(b) + 1)
            return b + b"\n"
        b = rng.choice([b"", b"   ", b"\t", b"\r"])
        self.count("blank or whitespace", len(b) + 1)
        return b + b"\n"

    def huge(self):
        """A line of 256 KiB .. the line limit + 4 MiB: random text, or a request."""
        rng = self.rng
        if rng.random() < 0.5:
            size = rng.randint(256 << 10, max(512 << 10, min(self.max_line - 200, 8 * MiB)))
        else:
            size = rng.randint(self.max_line, self.max_line + 4 * MiB)
        if rng.random() < 0.5:
            b = bytes(rng.choices(b"abcdefghijklmnopqrstuvwxyz{}[]\",:0123456789 ", k=size))
            self.count("huge random text", size + 1)
            return b + b"\n"
        over = size + 100 > self.max_line
        req = {"id": self.bad_id() if over else self.valid_id(), "method": "fs/getMetadata",
               "params": {"path": "/" + "a" * size}}
        line = json.dumps(req, ensure_ascii=False).encode() + b"\n"
        if over:
            self.count("huge request over the limit", len(line))
            return line
        self.count("huge request under the limit (answered by id)", len(line))
        return self.send_valid(req, None, line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--max-line-bytes", type=int, default=4 * MiB)
    ap.add_argument("--huge-share", type=float, default=0.5,
                    help="share of the bytes in huge lines")
    a, seed, rng, tmp = soaklib.parse_args(ap, "input_soak")
    limit = a.max_line_bytes if a.max_line_bytes > 0 else 64 * MiB
    args = ["--max-line-bytes", str(a.max_line_bytes)] if a.max_line_bytes > 0 else []
    print("input_soak: %.0f MB, line limit %d, seed %d; %s" % (a.mb, limit, seed,
                                                              soaklib.machine()), flush=True)
    c = soaklib.Conn(a.bin, home=os.path.join(tmp, "home"), args=args,
                     stderr_path=os.path.join(tmp, "stderr.log"))
    c.wants_wait = False
    c.initialize("input_soak")
    base = soaklib.snapshot(c.pid)
    g = Gen(rng, c, limit)
    total = int(a.mb * 1e6)
    sent = normal = huge = 0
    t0 = time.monotonic()
    chunk = []
    chunk_n = 0
    next_report = 10e6
    while sent < total:
        if huge < a.huge_share * sent and rng.random() < 0.01:
            b = g.huge()
            huge += len(b)
        else:
            b = g.line()
            normal += len(b)
        chunk.append(b)
        chunk_n += len(b)
        sent += len(b)
        if chunk_n >= 1 << 16:
            c.send_raw(b"".join(chunk))
            chunk, chunk_n = [], 0
        if sent >= next_report:
            print("  %.0f MB sent (%.0f s), daemon RSS %.1f MiB" % (
                sent / 1e6, time.monotonic() - t0, soaklib.rss_kib(c.pid) / 1024), flush=True)
            next_report += 10e6
    c.send_raw(b"".join(chunk))
    write_s = time.monotonic() - t0
    c.wants_wait = True
    try:
        fin = c.call("config/read", {}, 300)
    except TimeoutError as e:
        fin = {"error": str(e)}
    run_s = time.monotonic() - t0
    time.sleep(0.5)
    after = soaklib.snapshot(c.pid)
    rc = c.close(60)

    print("sent %.1f MB (%.1f MB huge) in %.1f s; all answered after %.1f s" % (
        sent / 1e6, huge / 1e6, write_s, run_s))
    for k, (n, nb) in sorted(g.counts.items()):
        print("  %-48s %8d lines %10.1f MB" % (k, n, nb / 1e6))
    print("daemon at start: %s" % soaklib.fmt_snap(base))
    print("daemon at end:   %s" % soaklib.fmt_snap(after))
    ch = soaklib.Checks()
    valid = [k for k in c.answered if not (k[0] == "str" and k[1].startswith("x-"))]
    unanswered = [k for k in valid if c.answered[k] == 0]
    twice = [k for k in c.answered if c.answered[k] > 1]
    ch.check("well-formed requests answered exactly once: %d sent, %d unanswered, %d twice" % (
        len(valid), len(unanswered), len(twice)), not unanswered and not twice,
        "%s %s" % (unanswered[:5], twice[:5]))
    ch.check("answers of the expected kind", not g.wrong, "%d wrong; %s" % (
        len(g.wrong), "; ".join(g.wrong[:3])))
    stray = [m for m in c.unknown_answers
             if not (isinstance(m.get("id"), str) and m["id"].startswith("x-"))]
    ch.check("answers to malformed lines: %d with id null, %d with their own id" % (
        c.null_id_answers, len(c.unknown_answers) - len(stray)), not stray,
        "answers for ids never sent: %.300s" % stray[:3])
    by_kind = {}
    for m in c.unknown_answers:
        k = g.bad_kind.get(m.get("id"), "?")
        code = m.get("error", {}).get("code", "result")
        by_kind[(k, code)] = by_kind.get((k, code), 0) + 1
    for (k, code), n in sorted(by_kind.items()):
        print("  malformed line answered with its own id: %-28s %-7s %6d" % (k, code, n))
    ch.check("every output line a JSON object (%d lines)" % c.lines_in, not c.errors,
             "; ".join(c.errors[:3]))
    ch.check("daemon alive at the end (final request answered)", "result" in fin,
             "%.200s" % fin)
    ch.check("exit status 0 on stdin EOF", rc == 0, "got %r" % rc)
    return soaklib.finish(ch, tmp, "stderr.log")


if __name__ == "__main__":
    sys.exit(main())
