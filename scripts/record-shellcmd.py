#!/usr/bin/env python3
"""Record what upstream codex 0.169 sends for thread/shellCommand (not part of `make test`).

Drives `codex app-server` (or ours, to compare) against `app-server mock-model` through the
scenarios of tests/integration/test_shellcmd.c: a command on an idle thread, one alongside a
turn waiting on an approval, an interrupt, a timeout, turn/start during a command, two at once,
timeoutMs 0. Writes the raw logs to OUT/<which>-idle.jsonl and OUT/<which>-busy.jsonl; then
`--fixture` turns upstream's logs into tests/fixtures/shellcmd/upstream_sequences.json (method
order only; the record texts were added from the rollouts by hand).

usage: scripts/record-shellcmd.py up|ours [OUT]     (UP: the codex binary, OURS: build/app-server)
       scripts/record-shellcmd.py --fixture IDLE.jsonl BUSY.jsonl
"""
import glob
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

UP = os.environ.get("UP", "/tmp/up/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
OURS = os.path.abspath(os.environ.get("OURS", "build/app-server"))

class D:
    def __init__(s, argv, home, path_extra=None):
        env = dict(os.environ, CODEX_HOME=home)
        if path_extra: env["PATH"] = path_extra + ":" + env["PATH"]
        s.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(home + "/stderr.log", "w"), env=env)
        s.n = 1; s.buf = b""; s.log = []; s.t0 = time.time()
    def send(s, m):
        s.log.append(("->", round(time.time()-s.t0,3), m))
        s.p.stdin.write((json.dumps(m) + "\n").encode()); s.p.stdin.flush()
    def req(s, method, params):
        i = s.n; s.n += 1
        s.send({"id": i, "method": method, "params": params}); return i
    def read(s, timeout=20):
        fd = s.p.stdout.fileno()
        while b"\n" not in s.buf:
            r, _, _ = select.select([fd], [], [], timeout)
            if not r: return None
            c = os.read(fd, 1 << 16)
            if not c: return None
            s.buf += c
        l, s.buf = s.buf.split(b"\n", 1)
        m = json.loads(l); s.log.append(("<-", round(time.time()-s.t0,3), m)); return m
    def until(s, pred, timeout=20):
        end = time.time() + timeout
        while time.time() < end:
            m = s.read(max(0.01, end - time.time()))
            if m is None: return None
            if pred(m): return m
        return None
    def drain(s, secs):
        end = time.time() + secs
        while time.time() < end:
            if s.read(max(0.01, end - time.time())) is None: break

def mock(tmp, script, tag):
    sp = os.path.join(tmp, "script-%s.json" % tag); rec = os.path.join(tmp, "rec-%s.jsonl" % tag)
    json.dump(script, open(sp, "w"))
    p = subprocess.Popen([OURS, "mock-model", "--script", sp, "--record", rec], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return p, int(p.stdout.readline()), rec

def config(home, port, approval="never", sandbox="danger-full-access"):
    open(os.path.join(home, "config.toml"), "w").write(
        'model = "mock-model"\napproval_policy = "%s"\nsandbox_mode = "%s"\n'
        'model_provider = "mock_provider"\n[features]\nremote_models = false\n'
        '[model_providers.mock_provider]\nname = "Mock provider"\n'
        'base_url = "http://127.0.0.1:%d/v1"\nwire_api = "responses"\n'
        'request_max_retries = 0\nstream_max_retries = 0\n' % (approval, sandbox, port))

def setup(which, script, tag, approval="never", sandbox="danger-full-access"):
    tmp = tempfile.mkdtemp(prefix="shc-%s-%s." % (which, tag))
    home = tmp + "/home"; ws = tmp + "/ws"; bindir = tmp + "/bin"
    for d in (home, ws, bindir): os.mkdir(d)
    os.symlink(UP, bindir + "/codex-linux-sandbox")
    mp, port, rec = mock(tmp, script, tag)
    config(home, port, approval, sandbox)
    argv = [UP, "app-server"] if which == "up" else [OURS]
    d = D(argv, home, bindir)
    i = d.req("initialize", {"clientInfo": {"name": "rec", "version": "1"}, "capabilities": {"experimentalApi": True}})
    d.until(lambda m: m.get("id") == i)
    return d, tmp, ws, mp, rec

def dump(d, path):
    with open(path, "w") as f:
        for dirn, t, m in d.log: f.write(json.dumps([dirn, t, m]) + "\n")


def idle(which, out):
    script = {"responses": [{"events": [{"ev": "created"}, {"ev": "message", "id": "m1", "text": "ok"}, {"ev": "completed"}]}], "repeat": True}
    d, tmp, ws, mp, rec = setup(which, script, "idle")
    i = d.req("thread/start", {"cwd": ws})
    r = d.until(lambda m: m.get("id") == i); tid = r["result"]["thread"]["id"]
    d.drain(0.5)
    i = d.req("thread/shellCommand", {"threadId": tid, "command": "echo hi; echo err >&2; exit 3"})
    d.until(lambda m: m.get("method") == "turn/completed")
    d.drain(1)
    i = d.req("thread/read", {"threadId": tid, "includeTurns": True}); d.until(lambda m: m.get("id") == i)
    i = d.req("turn/start", {"threadId": tid, "input": [{"type": "text", "text": "next"}]})
    d.until(lambda m: m.get("method") == "turn/completed"); d.drain(0.5)
    i = d.req("thread/read", {"threadId": tid, "includeTurns": True}); d.until(lambda m: m.get("id") == i)
    # errors
    i = d.req("thread/shellCommand", {"threadId": tid, "command": ""}); d.until(lambda m: m.get("id") == i)
    i = d.req("thread/shellCommand", {"threadId": "00000000-0000-0000-0000-000000000000", "command": "true"}); d.until(lambda m: m.get("id") == i)
    i = d.req("thread/shellCommand", {"threadId": "bogus", "command": "true"}); d.until(lambda m: m.get("id") == i)
    i = d.req("thread/shellCommand", {"threadId": tid, "command": "true", "timeoutMs": -1}); d.until(lambda m: m.get("id") == i)
    d.drain(1)
    dump(d, out + "/%s-idle.jsonl" % which)
    for f in glob.glob(tmp + "/home/sessions/*/*/*/*.jsonl"): shutil.copy(f, out + "/%s-idle-rollout.jsonl" % which)
    shutil.copy(rec, out + "/%s-idle-rec.jsonl" % which)
    d.p.stdin.close(); d.p.wait(10); mp.terminate()


def busy(which, out):
    script = {"responses": [
      {"events": [{"ev": "created"}, {"ev": "function_call", "call_id": "call-approve", "name": "exec_command", "arguments": {"cmd": "touch agent.txt", "sandbox_permissions": "require_escalated", "justification": "need it"}}, {"ev": "completed"}]},
      {"events": [{"ev": "created"}, {"ev": "message", "id": "m1", "text": "done"}, {"ev": "completed"}]}], "repeat": True}
    d, tmp, ws, mp, rec = setup(which, script, "busy", approval="on-request", sandbox="read-only")
    def start():
        i = d.req("thread/start", {"cwd": ws}); return d.until(lambda m: m.get("id") == i)["result"]["thread"]["id"]
    try:
        tid = start(); d.drain(0.3)
        # A: shell command alongside a turn waiting on approval
        i = d.req("turn/start", {"threadId": tid, "input": [{"type": "text", "text": "run"}]})
        req = d.until(lambda m: m.get("method") == "item/commandExecution/requestApproval")
        i = d.req("thread/shellCommand", {"threadId": tid, "command": "echo side > side.txt; cat side.txt"})
        d.until(lambda m: m.get("method") == "item/completed" and m["params"]["item"].get("source") == "userShell")
        d.drain(0.5)
        d.send({"id": req["id"], "result": {"decision": "decline"}})
        d.until(lambda m: m.get("method") == "turn/completed"); d.drain(0.5)
        d.log.append(("--", 0, {"mark": "interrupt"}))
        # B: interrupt a running shell command
        tid2 = start(); d.drain(0.3)
        i = d.req("thread/shellCommand", {"threadId": tid2, "command": "echo start; sleep 30"})
        ts = d.until(lambda m: m.get("method") == "turn/started")
        d.until(lambda m: m.get("method") == "item/commandExecution/outputDelta")
        i = d.req("turn/interrupt", {"threadId": tid2, "turnId": ts["params"]["turn"]["id"]})
        d.until(lambda m: m.get("method") == "turn/completed"); d.drain(0.5)
        d.log.append(("--", 0, {"mark": "timeout"}))
        # C: timeout
        tid3 = start(); d.drain(0.3)
        i = d.req("thread/shellCommand", {"threadId": tid3, "command": "echo t; sleep 5; echo never", "timeoutMs": 500})
        d.until(lambda m: m.get("method") == "turn/completed", 10); d.drain(0.5)
        d.log.append(("--", 0, {"mark": "turnstart-during"}))
        # D: turn/start while a shell command runs
        tid4 = start(); d.drain(0.3)
        i = d.req("thread/shellCommand", {"threadId": tid4, "command": "sleep 1; echo slow"})
        d.until(lambda m: m.get("method") == "turn/started")
        i = d.req("turn/start", {"threadId": tid4, "input": [{"type": "text", "text": "during"}]})
        d.until(lambda m: m.get("method") == "turn/completed", 10); d.drain(3)
        # E: two shell commands at once
        d.log.append(("--", 0, {"mark": "two"}))
        tid5 = start(); d.drain(0.3)
        i = d.req("thread/shellCommand", {"threadId": tid5, "command": "sleep 0.5; echo one"})
        i = d.req("thread/shellCommand", {"threadId": tid5, "command": "echo two"})
        d.drain(3)
        d.log.append(("--", 0, {"mark": "timeout0"}))
        i = d.req("thread/shellCommand", {"threadId": tid5, "command": "echo zero", "timeoutMs": 0})
        d.drain(2)
    finally:
        dump(d, out + "/%s-busy.jsonl" % which)
    os.makedirs(out + "/%s-busy-rollouts" % which, exist_ok=True)
    for f in glob.glob(tmp + "/home/sessions/*/*/*/*.jsonl"): shutil.copy(f, out + "/%s-busy-rollouts/" % which)
    shutil.copy(rec, out + "/%s-busy-rec.jsonl" % which)
    d.p.stdin.close(); d.p.wait(10); mp.terminate()


SKIP = {"warning", "remoteControl/status/changed", "configWarning", "thread/readState/changed",
        "account/rateLimits/updated", "deprecationNotice", "thread/started", "thread/tokenUsage/updated"}
def load(p): return [json.loads(l) for l in open(p)]
def seq(log, start_pred, end_pred):
    out, methods, on = [], {}, False
    for d, t, m in log:
        if d == "--": continue
        if d == "->":
            if "method" in m: methods[m["id"]] = m["method"]
            if not on and start_pred(m): on = True
            continue
        if not on: continue
        if "method" not in m:
            e = "answer:" + methods.get(m.get("id"), "?")
            if e == "answer:thread/start": continue
        else:
            if m["method"] in SKIP: continue
            e = m["method"]
            it = m.get("params", {}).get("item")
            if it is not None:
                e += ":" + it["type"] + (":" + it["source"] if it.get("source") else "")
        if e == "item/commandExecution/outputDelta" and out and out[-1] == e: continue
        out.append(e)
        if end_pred(m): break
    return out
def fixture(idle_path, busy_path):
    idle = load(idle_path); busy = load(busy_path)
    isreq = lambda meth: (lambda m: m.get("method") == meth)
    def nth_req(meth, n):
        c = [0]
        def f(m):
            if m.get("method") == meth:
                c[0] += 1
                return c[0] == n
            return False
        return f
    tc = lambda m: m.get("method") == "turn/completed"
    usercomp = lambda m: m.get("method") == "item/completed" and m["params"]["item"].get("source") == "userShell"
    fix = {
     "_about": "upstream codex 0.169's messages for thread/shellCommand on the mock model (scripts/record-shellcmd.py): from the request to the end, as 'method[:itemType[:source]]' or 'answer:<method>'; messages we do not send (warning, remoteControl/status/changed, configWarning, thread/readState/changed, account/rateLimits/updated, deprecationNotice, thread/tokenUsage/updated) left out, consecutive outputDeltas as one.",
     "idle": seq(idle, nth_req("thread/shellCommand", 1), tc),
     "alongside": seq(busy, nth_req("thread/shellCommand", 1), usercomp),
     "interrupt": seq(busy, nth_req("thread/shellCommand", 2), tc),
     "timeout": seq(busy, nth_req("thread/shellCommand", 3), tc),
     "turn_start_during": seq(busy, nth_req("thread/shellCommand", 4), tc),
     "timeout_zero": seq(busy, nth_req("thread/shellCommand", 7), tc),
    }
    print(json.dumps(fix, indent=1))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--fixture"]:
        fixture(sys.argv[2], sys.argv[3])
    else:
        out = sys.argv[2] if len(sys.argv) > 2 else "/tmp"
        idle(sys.argv[1], out)
        busy(sys.argv[1], out)
