/* command/exec through the client against the real daemon: bytes, PTY, stdin, terminate. */
import assert from "node:assert/strict";
import { test } from "node:test";

import type { ExecProcess } from "../src/index.js";
import { daemon } from "./helpers.js";

const full = { type: "dangerFullAccess" } as const;

/** Collect a PTY's output as text and wait for a pattern to show up. */
class Screen {
  text = "";
  private wakers: (() => void)[] = [];
  readonly done: Promise<void>;

  constructor(proc: ExecProcess) {
    this.done = (async () => {
      for await (const b of proc) {
        this.text += b.toString("utf8");
        this.wakers.splice(0).forEach((w) => w());
      }
    })();
  }

  async waitFor(re: RegExp, ms = 5000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!re.test(this.text)) {
      if (Date.now() > deadline) throw new Error(`no ${re} in ${JSON.stringify(this.text)}`);
      await new Promise<void>((r) => {
        this.wakers.push(r);
        setTimeout(r, 100);
      });
    }
  }
}

test("streamed chunks are the exact bytes of each stream, then the result", async () => {
  const conn = await daemon();
  try {
    const proc = conn.exec({
      command: ["sh", "-c", "printf 'a\\000\\377b'; printf err >&2; exit 5"],
      sandboxPolicy: full,
    });
    const out: Buffer[] = [], err: Buffer[] = [];
    for await (const c of proc.chunks()) (c.stream === "stdout" ? out : err).push(c.data);
    assert.deepEqual(Buffer.concat(out), Buffer.from([0x61, 0, 0xff, 0x62]));
    assert.equal(Buffer.concat(err).toString(), "err");
    const r = await proc.result;
    assert.deepEqual(r, { exitCode: 5, stdout: "", stderr: "" });
  } finally {
    await conn.close();
  }
});

test("the default readOnly sandbox runs a command; unstreamed output is in the result", async () => {
  const conn = await daemon();
  try {
    const proc = conn.exec({ command: ["echo", "hi"], streamStdoutStderr: false });
    const chunks: Buffer[] = [];
    for await (const b of proc) chunks.push(b);
    assert.equal(chunks.length, 0);
    assert.deepEqual(await proc.result, { exitCode: 0, stdout: "hi\n", stderr: "" });
  } finally {
    await conn.close();
  }
});

test("a PTY: stty size, a resize, exit 3", async () => {
  const conn = await daemon();
  try {
    const proc = conn.exec({
      command: ["sh"],
      tty: true,
      size: { rows: 24, cols: 80 },
      disableTimeout: true,
      sandboxPolicy: full,
    });
    const screen = new Screen(proc);
    await proc.write("stty size\n");
    await screen.waitFor(/24 80/);
    await proc.resize({ rows: 40, cols: 100 });
    await proc.write("stty size\n");
    await screen.waitFor(/40 100/);
    await proc.write("exit 3\n");
    assert.equal((await proc.result).exitCode, 3);
    await screen.done;
  } finally {
    await conn.close();
  }
});

test("stdin: write, then closeStdin ends cat", async () => {
  const conn = await daemon();
  try {
    const proc = conn.exec({ command: ["cat"], streamStdin: true, sandboxPolicy: full });
    const got: Buffer[] = [];
    const reading = (async () => {
      for await (const b of proc) got.push(b);
    })();
    await proc.write(Buffer.from([1, 2, 3, 0, 255]));
    await proc.write("é\n");
    await proc.closeStdin();
    assert.equal((await proc.result).exitCode, 0);
    await reading;
    assert.deepEqual(Buffer.concat(got), Buffer.concat([Buffer.from([1, 2, 3, 0, 255]), Buffer.from("é\n")]));
  } finally {
    await conn.close();
  }
});

test("terminate kills the process group: exit code 137", async () => {
  const conn = await daemon();
  try {
    const proc = conn.exec({ command: ["sleep", "30"], disableTimeout: true, sandboxPolicy: full });
    await new Promise((r) => setTimeout(r, 100));
    await proc.terminate();
    assert.equal((await proc.result).exitCode, 137);
  } finally {
    await conn.close();
  }
});

test("a consumer that falls behind pauses reading, and still gets every byte", async () => {
  const conn = await daemon();
  try {
    const n = 32 * 1024 * 1024;
    const proc = conn.exec({ command: ["head", "-c", String(n), "/dev/zero"], sandboxPolicy: full, disableOutputCap: true });
    let total = 0, slowed = 0, paused = false;
    for await (const b of proc) {
      total += b.length;
      if (slowed++ < 20) await new Promise((r) => setTimeout(r, slowed === 1 ? 500 : 20));
      paused ||= conn.child!.stdout!.isPaused();
    }
    assert.equal(total, n);
    assert.ok(paused, "the connection never stopped reading for the slow consumer");
    assert.equal((await proc.result).exitCode, 0);
  } finally {
    await conn.close();
  }
});

test("a consumer far behind can still await a request inside its loop", async () => {
  const conn = await daemon();
  try {
    const n = 24 * 1024 * 1024;
    const proc = conn.exec({ command: ["head", "-c", String(n), "/dev/zero"], sandboxPolicy: full, disableOutputCap: true });
    let total = 0, first = true;
    for await (const b of proc) {
      total += b.length;
      if (first) {
        first = false;
        await new Promise((r) => setTimeout(r, 500)); // the backlog passes the high watermark
        assert.ok(conn.child!.stdout!.isPaused());
        const cfg = await conn.request("config/read", {}, { timeoutMs: 5000 });
        assert.ok(cfg.config !== undefined);
      }
    }
    assert.equal(total, n);
  } finally {
    await conn.close();
  }
});
