/*
 * The connection against the real daemon: the handshake, typed requests, errors, notifications,
 * -32001 retries, a huge answer line, clean shutdown, a missing binary, a daemon that dies.
 * Against the fake server: CRLF lines written 3 bytes at a time, -32001 retries counted.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { Connection, ConnectionClosedError, ErrorCode, RpcError, spawn } from "../src/index.js";
import { binary, daemon, fake } from "./helpers.js";

const full = { type: "dangerFullAccess" } as const;

test("initialize answers with the daemon's identity", async () => {
  const conn = await daemon({ clientInfo: { name: "ts-test", version: "1.2" } });
  try {
    const init = conn.initializeResult!;
    assert.equal(init.platformOs, "linux");
    assert.match(init.userAgent, /^ts-test\/.*\(ts-test; 1\.2\)$/);
  } finally {
    await conn.close();
  }
});

test("typed requests: config/read, model/list, account/read", async () => {
  const conn = await daemon();
  try {
    const cfg = await conn.request("config/read", { includeLayers: true });
    assert.equal(typeof cfg.origins, "object");
    assert.ok(Array.isArray(cfg.layers));
    const models = await conn.request("model/list", { limit: 2 });
    assert.ok(models.data.length > 0 && models.data.length <= 2);
    assert.equal(typeof models.data[0]!.id, "string");
    const acct = await conn.request("account/read", {});
    assert.equal(typeof acct.requiresOpenaiAuth, "boolean");
  } finally {
    await conn.close();
  }
});

test("errors carry their JSON-RPC code, message and data", async () => {
  const conn = await daemon();
  try {
    await assert.rejects(conn.request("no/such", {}), (e: unknown) => {
      assert.ok(e instanceof RpcError);
      assert.ok(e.isMethodNotFound);
      assert.match(e.message, /Method not found: no\/such/);
      return true;
    });
    await assert.rejects(
      conn.request("command/exec", { command: "ls" as unknown as string[] }),
      (e: unknown) => e instanceof RpcError && e.code === ErrorCode.InvalidParams &&
        (e.data as { path: string }).path === "/params/command",
    );
  } finally {
    await conn.close();
  }
});

test("a notification sent right after initialize reaches a listener set before it", async () => {
  const home = mkdtempSync(join(tmpdir(), "asc-ts-"));
  writeFileSync(join(home, "config.toml"), "model = [unterminated\n");
  const conn = new Connection({ binary, env: { CODEX_HOME: home } });
  const warned = new Promise<string>((resolve) => conn.on("configWarning", (p) => resolve(p.summary)));
  try {
    await conn.initialize();
    assert.match(await warned, /config/i);
  } finally {
    await conn.close();
    rmSync(home, { recursive: true, force: true });
  }
});

test("-32001 is retried with backoff until the daemon has room", async () => {
  const conn = await daemon({ args: ["--max-inflight", "1"] });
  const strict = await daemon({ args: ["--max-inflight", "1"], retry: false });
  try {
    const slow = conn.exec({ command: ["sleep", "0.4"], sandboxPolicy: full });
    const t0 = Date.now();
    const cfg = await conn.request("config/read", {});
    assert.ok(cfg.config !== undefined);
    assert.ok(Date.now() - t0 >= 150, "answered before the slot was free");
    assert.equal((await slow.result).exitCode, 0);

    const busy = strict.exec({ command: ["sleep", "0.3"], sandboxPolicy: full });
    await assert.rejects(strict.request("config/read", {}), (e: unknown) =>
      e instanceof RpcError && e.code === ErrorCode.Overloaded);
    await busy.result;
  } finally {
    await conn.close();
    await strict.close();
  }
});

test("a 20 MB answer line arrives whole", async () => {
  const conn = await daemon();
  try {
    const n = 20 * 1000 * 1000;
    const r = await conn.request("command/exec", {
      command: ["sh", "-c", `head -c ${n} /dev/zero | tr '\\0' a`],
      disableOutputCap: true,
      sandboxPolicy: full,
    });
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout.length, n);
    assert.ok(/^a+$/.test(r.stdout));
  } finally {
    await conn.close();
  }
});

test("close() ends stdin and the daemon exits 0", async () => {
  const conn = await daemon();
  const st = await conn.close();
  assert.deepEqual(st, { code: 0, signal: null });
  assert.ok(conn.closed instanceof ConnectionClosedError);
  await assert.rejects(conn.request("config/read", {}), ConnectionClosedError);
});

test("a missing binary is a clear error", async () => {
  await assert.rejects(spawn({ binary: "/nonexistent/app-server" }), /cannot run app-server \(\/nonexistent\/app-server\): .*ENOENT/);
});

test("a daemon that dies fails the pending requests with its status", async () => {
  const conn = await daemon();
  const run = conn.exec({ command: ["sleep", "10"], sandboxPolicy: full });
  await new Promise((r) => setTimeout(r, 100));
  conn.child!.kill("SIGKILL");
  await assert.rejects(run.result, (e: unknown) =>
    e instanceof ConnectionClosedError && /killed by SIGKILL/.test(e.message));
  await conn.close();
});

test("CRLF lines written 3 bytes at a time are read whole", async () => {
  const conn = await fake("crlf");
  try {
    const big = { s: "é€😀".repeat(5000), n: [1, 2, 3] };
    assert.deepEqual(await conn.request("echo", big), big);
  } finally {
    await conn.close();
  }
});

test("the fake server's -32001 answers are retried under new ids", async () => {
  const conn = await fake("overload");
  try {
    const r = await conn.request("model/list", {});
    assert.equal((r as unknown as { attempts: number }).attempts, 4);
  } finally {
    await conn.close();
  }
});
