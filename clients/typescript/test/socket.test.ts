/*
 * connect(): the connection on a daemon started with --listen, over ws:// and unix://
 * (requests, errors, notifications, command/exec, an approval answered in a turn against the
 * mock model, the bearer token of --ws-auth, the close handshake from either side), and the
 * WebSocket client itself against a scripted peer (fragments, ping, size limit, bad frames).
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { connect, ConnectionClosedError, FrameReader, RpcError, WebSocketClient, WebSocketError } from "../src/index.js";
import { acceptKey } from "../src/ws.js";
import { APPROVAL_SCRIPT, listenDaemon, mockConfig, mockModel, TRANSPORTS } from "./listen.js";

const full = { type: "dangerFullAccess" } as const;

for (const [name, listen] of TRANSPORTS) {
  test(`${name}: requests, errors, notifications and command/exec`, async () => {
    const d = await listenDaemon(listen);
    try {
      const conn = await connect(d.url, { clientInfo: { name: "ts-sock", version: "1.0" } });
      assert.equal(conn.child, null);
      assert.equal(conn.initializeResult!.platformOs, "linux");
      assert.equal(typeof (await conn.request("config/read", {})).config, "object");
      await assert.rejects(conn.request("no/such" as string, {}), (e: unknown) => e instanceof RpcError && e.code === -32601);
      const streams = new Set<string>();
      conn.on("command/exec/outputDelta", (p) => void streams.add(p.stream));
      const run = conn.exec({ command: ["sh", "-c", "echo out; echo err >&2; exit 3"], sandboxPolicy: full });
      const out: string[] = [];
      for await (const c of run.chunks()) if (c.stream === "stdout") out.push(c.data.toString());
      assert.equal((await run.result).exitCode, 3);
      assert.equal(out.join(""), "out\n");
      assert.deepEqual([...streams].sort(), ["stderr", "stdout"]);
      const big = await conn.request("command/exec", {
        command: ["sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' a"],
        disableOutputCap: true,
        sandboxPolicy: full,
      });
      assert.equal(big.stdout.length, 3000000);
      assert.deepEqual(await conn.close(), { code: 0, signal: null }); // our close answered with 1000
      assert.ok(conn.closed instanceof ConnectionClosedError);
      await assert.rejects(conn.request("config/read", {}), ConnectionClosedError);
      const again = await connect(d.url); // the daemon serves on
      assert.equal(typeof (await again.request("config/read", {})).config, "object");
      await again.close();
    } finally {
      await d.stop();
    }
  });

  test(`${name}: an approval answered by a handler in a turn on the mock model`, async () => {
    const mm = await mockModel(APPROVAL_SCRIPT);
    const d = await listenDaemon(listen, [], mockConfig(mm.port));
    try {
      const conn = await connect(d.url);
      const asked: string[] = [];
      conn.handle("item/commandExecution/requestApproval", (p) => {
        asked.push(p.command ?? "");
        return { decision: "accept" as const };
      });
      let resolved = 0;
      conn.on("serverRequest/resolved", () => void resolved++);
      const thread = await conn.startThread({ cwd: d.workspace, approvalPolicy: "untrusted", sandbox: "danger-full-access" });
      const done = await thread.turn([{ type: "text", text: "touch a file" }]).completed();
      assert.equal(done.status, "completed");
      assert.equal(asked.length, 1);
      assert.match(asked[0]!, /touch a\.txt/);
      assert.equal(resolved, 1);
      assert.ok(existsSync(join(d.workspace, "a.txt")));
      await conn.close();
    } finally {
      await d.stop();
      await mm.stop();
    }
  });

  test(`${name}: the daemon going away fails what is pending`, async () => {
    const d = await listenDaemon(listen);
    const conn = await connect(d.url);
    const pending = conn
      .request("command/exec", { command: ["sleep", "30"], sandboxPolicy: full })
      .then(() => null, (e: unknown) => e); // settled when the connection ends
    const closed = new Promise<ConnectionClosedError>((r) => conn.onClose(r));
    assert.equal(await d.stop(), 0); // SIGTERM: every connection closed with 1001
    assert.match((await closed).message, /1001/);
    assert.ok((await pending) instanceof ConnectionClosedError);
  });

  test(`${name}: the bearer token of --ws-auth capability-token`, async () => {
    const scratch = mkdtempSync(join(tmpdir(), "asc-ts-tok-"));
    writeFileSync(join(scratch, "token"), "s3cret-token\n");
    const d = await listenDaemon(listen, ["--ws-auth", "capability-token", "--ws-token-file", join(scratch, "token")]);
    try {
      await assert.rejects(connect(d.url), (e: unknown) =>
        e instanceof ConnectionClosedError && /401/.test(e.message) && /missing websocket bearer token/.test(e.message));
      await assert.rejects(connect(d.url, { token: "wrong" }), /invalid websocket bearer token/);
      const conn = await connect(d.url, { token: "s3cret-token" });
      assert.equal(typeof (await conn.request("config/read", {})).config, "object");
      await conn.close();
    } finally {
      await d.stop();
      rmSync(scratch, { recursive: true, force: true });
    }
  });
}

function serverFrame(opcode: number, payload: Buffer, fin = true): Buffer {
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0, n]) : Buffer.from([0, 126, n >> 8, n & 0xff]);
  head[0] = (fin ? 0x80 : 0) | opcode;
  return Buffer.concat([head, payload]);
}

/** Client frames as the peer reads them: [opcode, unmasked payload], each checked masked. */
function clientFrames(buf: Buffer): Array<[number, Buffer]> {
  const out: Array<[number, Buffer]> = [];
  for (let at = 0; at + 2 <= buf.length; ) {
    assert.ok(buf[at + 1]! & 0x80, "a client frame must be masked");
    const n = buf[at + 1]! & 0x7f; // small frames only in these tests
    const key = buf.subarray(at + 2, at + 6);
    const data = Buffer.from(buf.subarray(at + 6, at + 6 + n).map((b, i) => b ^ key[i & 3]!));
    out.push([buf[at]! & 0x0f, data]);
    at += 6 + n;
  }
  return out;
}

/** A scripted WebSocket server on a Unix socket: answers the upgrade, then runs `script`. */
async function fakePeer(script: (s: Socket, got: Buffer[]) => void, accept?: string) {
  const dir = mkdtempSync(join(tmpdir(), "asc-ts-peer-"));
  const path = join(dir, "peer.sock");
  const got: Buffer[] = [];
  const server = createServer((s) => {
    let req = "";
    s.on("data", (chunk: Buffer) => {
      if (!req.includes("\r\n\r\n")) {
        req += chunk.toString("latin1");
        if (!req.includes("\r\n\r\n")) return;
        const key = /sec-websocket-key: *(\S+)/i.exec(req)![1]!;
        s.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Accept: ${accept ?? acceptKey(key)}\r\n\r\n`);
        script(s, got);
        return;
      }
      got.push(chunk);
    });
  });
  await new Promise<void>((r) => server.listen(path, r));
  return {
    url: `unix://${path}`,
    frames: () => clientFrames(Buffer.concat(got)),
    stop: () => new Promise<void>((r) => server.close(() => (rmSync(dir, { recursive: true, force: true }), r()))),
  };
}

test("websocket: fragments with a ping between them, then the daemon's close", async () => {
  const peer = await fakePeer((s) =>
    s.write(Buffer.concat([serverFrame(1, Buffer.from('{"a":'), false), serverFrame(9, Buffer.from("p1")),
      serverFrame(0, Buffer.from("1}"))])));
  try {
    const ws = await WebSocketClient.connect(peer.url);
    const msg = await new Promise<string>((r) => (ws.onMessage = r));
    assert.equal(msg, '{"a":1}');
    ws.sendText("hello");
    const closed = new Promise<[number, string]>((r) => (ws.onClose = (c, why) => r([c, why])));
    await new Promise((r) => setTimeout(r, 50));
    ws.close(1000, "bye");
    ws.destroy();
    await closed;
    const frames = peer.frames();
    assert.deepEqual(frames[0], [10, Buffer.from("p1")]); // the pong, between the fragments
    assert.deepEqual(frames[1], [1, Buffer.from("hello")]);
  } finally {
    await peer.stop();
  }
});

test("websocket: a message over the limit is refused from its header (1009)", async () => {
  const peer = await fakePeer((s) => s.write(Buffer.from([0x81, 127, 0, 0, 0, 0, 0x40, 0, 0, 0]))); // 1 GB announced
  try {
    const ws = await WebSocketClient.connect(peer.url, { maxMessageBytes: 1 << 20 });
    const err = await new Promise<Error>((r) => (ws.onError = r));
    assert.ok(err instanceof WebSocketError && err.code === 1009);
    await new Promise<void>((r) => (ws.onClose = () => r()));
    const frames = peer.frames();
    assert.equal(frames[0]![0], 8);
    assert.equal(frames[0]![1].readUInt16BE(0), 1009);
  } finally {
    await peer.stop();
  }
});

test("websocket: a wrong Sec-WebSocket-Accept is refused; the codec byte by byte", async () => {
  const peer = await fakePeer(() => undefined, "AAAAAAAAAAAAAAAAAAAAAAAAAAA=");
  try {
    await assert.rejects(WebSocketClient.connect(peer.url), /Sec-WebSocket-Accept/);
  } finally {
    await peer.stop();
  }
  const r = new FrameReader(100);
  const bytes = Buffer.concat([serverFrame(1, Buffer.from("ab"), false), serverFrame(0, Buffer.from("cd"))]);
  const evs = [];
  for (let i = 0; i < bytes.length; i++) evs.push(...r.feed(bytes.subarray(i, i + 1)));
  assert.deepEqual(evs, [{ kind: "text", data: Buffer.from("abcd") }]);
  assert.throws(() => new FrameReader(100).feed(Buffer.from([0x81, 0x81, 0, 0, 0, 0, 0x78])), /masked/);
  assert.throws(() => new FrameReader(100).feed(serverFrame(1, Buffer.from([0xff]))), (e: unknown) => (e as WebSocketError).code === 1007);
});
