"""Shared by the socket tests: the real daemon started with --listen (ws:// or unix://), and
`app-server mock-model` playing a script, each in a scratch directory, stopped by cleanup."""
import json
import os
import re
import signal
import subprocess
import tempfile
import time

from ._helpers import BINARY, remove

START_SECS = 10


def _wait_for(pred, what, proc, log):
    deadline = time.monotonic() + START_SECS
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    with open(log, errors="replace") as f:
        raise AssertionError(f"{what} did not start (status {proc.poll()}): {f.read()[-2000:]}")


class MockModel:
    """`app-server mock-model --script` on a free port."""

    def __init__(self, testcase, responses):
        self.dir = tempfile.mkdtemp(prefix="asc-py-mm-")
        testcase.addCleanup(remove, self.dir)
        script = os.path.join(self.dir, "script.json")
        with open(script, "w") as f:
            json.dump(responses, f)
        port_file = os.path.join(self.dir, "port")
        log = os.path.join(self.dir, "stderr")
        with open(log, "wb") as err:
            self.proc = subprocess.Popen([BINARY, "mock-model", "--listen", "127.0.0.1:0", "--script", script,
                                          "--port-file", port_file], stdout=subprocess.DEVNULL, stderr=err)
        testcase.addCleanup(self._stop)

        def port():
            try:
                with open(port_file) as f:
                    return int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                return None

        self.port = _wait_for(port, "mock-model", self.proc, log)

    def _stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(10)


class Daemon:
    """build/app-server --listen URL on a scratch CODEX_HOME (and HOME); url is the bound one."""

    def __init__(self, testcase, listen, args=(), config=None):
        self.dir = tempfile.mkdtemp(prefix="asc-py-ws-")
        testcase.addCleanup(remove, self.dir)
        self.home = os.path.join(self.dir, "home")
        self.workspace = os.path.join(self.dir, "work")
        os.mkdir(self.home)
        os.mkdir(self.workspace)
        if config is not None:
            with open(os.path.join(self.home, "config.toml"), "w") as f:
                f.write(config)
        listen = listen.replace("DIR", self.dir)
        self.log = os.path.join(self.dir, "stderr")
        env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "CODEX_API_KEY")}
        env.update(CODEX_HOME=self.home, HOME=self.dir)
        with open(self.log, "wb") as err:
            self.proc = subprocess.Popen([BINARY, "--listen", listen, *args], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=err, env=env)
        testcase.addCleanup(self.stop)

        def banner():
            with open(self.log, errors="replace") as f:
                m = re.search(r"listening on: (\S+)", f.read())
            return m.group(1) if m else None

        self.url = _wait_for(banner, "app-server --listen", self.proc, self.log)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(10)


def mock_config(port):
    return ('model = "mock-model"\nmodel_provider = "mock"\n'
            '[model_providers.mock]\nname = "mock"\n'
            f'base_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\n'
            "request_max_retries = 0\nstream_max_retries = 0\n")


def _events(*evs):
    return {"events": [{"ev": "created"}, *evs, {"ev": "completed"}]}


#: A turn whose model runs `touch a.txt && echo hi` (an approval under "untrusted"), then says done.
APPROVAL_SCRIPT = [
    _events({"ev": "function_call", "call_id": "c1", "name": "exec_command",
             "arguments": {"cmd": "touch a.txt && echo hi"}}),
    _events({"ev": "message", "id": "m1", "text": "done"}),
]
