/*
 * RFC 6455 conformance of the daemon's listener, judged by an independent client: the `ws`
 * package from npm (a dev dependency; node 18, Debian 12's, has no WebSocket of its own). ws
 * fails the connection on anything a server may not send (a masked frame, text that is not
 * UTF-8, a bad length or close code), so every test also checks what the daemon sends.
 * Over ws:// and unix:// (ws's `ws+unix://PATH:/`): the upgrade, requests with 16- and 64-bit
 * lengths, fragments with pings between them, the size limit (1009), bad UTF-8 (1007), an
 * unmasked frame (1002), a binary message (dropped, logged), the close handshake either way.
 */
import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { test } from "node:test";

import WebSocket from "ws";

import { listenDaemon, TRANSPORTS, type Listening } from "./listen.js";

const full = { type: "dangerFullAccess" } as const;
const INFO = { APP_SERVER_LOG: "info" }; // the daemon logs each connection's end and why
const LIMITS = { timeout: 30000 };

type Msg = any; // JSON as it came

/** One ws connection: the messages it got in order, every event in order, how it closed. */
class Client {
  readonly events: string[] = [];
  readonly messages: Msg[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  upgrade: IncomingMessage | null = null;
  error: Error | null = null;
  private waiters: Array<() => void> = [];

  constructor(readonly ws: WebSocket) {
    ws.on("upgrade", (res) => (this.upgrade = res));
    ws.on("error", (e) => (this.error = e)); // ws found the daemon's side broken: a failure
    ws.on("pong", (data) => this.note(`pong:${data.toString()}`));
    ws.on("message", (data, isBinary) => {
      const text = data.toString();
      // one JSON-RPC message per text message, without the stdio line's newline
      assert.equal(isBinary, false, "the daemon sent a binary message");
      assert.ok(!text.endsWith("\n"), "a message with its line's newline");
      const m = JSON.parse(text);
      this.messages.push(m);
      this.note(m.id !== undefined ? `answer:${m.id}` : `notification:${m.method}`);
    });
    this.closed = new Promise((r) =>
      ws.on("close", (code, reason) => {
        this.note(`close:${code}`);
        r({ code, reason: reason.toString() });
      }),
    );
  }

  private note(what: string): void {
    this.events.push(what);
    for (const w of this.waiters.splice(0)) w();
  }

  /** The answer to request `id`, once it came. */
  async answer(id: number): Promise<Msg> {
    for (;;) {
      const m = this.messages.find((x) => x.id === id);
      if (m !== undefined) return m;
      if (this.ws.readyState >= WebSocket.CLOSING) throw new Error(`closed before answer ${id}: ${this.events}`);
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  request(id: number, method: string, params: unknown): Promise<Msg> {
    this.ws.send(JSON.stringify({ id, method, params }));
    return this.answer(id);
  }

  async initialize(): Promise<Msg> {
    const init = await this.request(0, "initialize", { clientInfo: { name: "rfc6455", version: "1" } });
    assert.equal(init.result?.platformOs, "linux", JSON.stringify(init));
    return init;
  }

  /** Send one message of `bytes` as text frames cut at `cuts`, `between` each (a ping). */
  fragments(bytes: Buffer, cuts: number[], between: (i: number) => void = () => undefined): void {
    const at = [0, ...cuts, bytes.length];
    for (let i = 0; i + 1 < at.length; i++) {
      if (i > 0) between(i);
      this.ws.send(bytes.subarray(at[i], at[i + 1]), { binary: false, fin: i + 2 === at.length });
    }
  }
}

/** A ws client on the daemon's url (unix:///P becomes ws's ws+unix:///P:/), once open. */
async function open(d: Listening): Promise<Client> {
  const url = d.url.startsWith("unix://") ? `ws+unix://${d.url.slice("unix://".length)}:/` : d.url;
  const c = new Client(new WebSocket(url)); // offers permessage-deflate, as ws does by default
  await new Promise<void>((resolve, reject) => {
    c.ws.once("open", resolve);
    c.ws.once("error", reject);
  });
  return c;
}

/** The daemon's log says connection #n ended with `why`. */
async function ended(d: Listening, n: number, why: string): Promise<void> {
  const line = `ws #${n}: disconnected (${why})`;
  for (let i = 0; i < 250 && !d.log().includes(line); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(d.log().includes(line), `no "${line}" in:\n${d.log()}`);
}

for (const [name, listen] of TRANSPORTS) {
  test(`${name}: the upgrade, requests both ways with 16- and 64-bit lengths, the client's close 1000`, LIMITS, async () => {
    const d = await listenDaemon(listen, [], undefined, INFO);
    try {
      const c = await open(d);
      assert.equal(c.upgrade?.statusCode, 101);
      assert.equal(c.upgrade?.headers.upgrade?.toLowerCase(), "websocket");
      assert.equal(c.upgrade?.headers["sec-websocket-extensions"], undefined); // deflate declined
      assert.equal(c.ws.extensions, "");
      assert.equal(c.ws.protocol, "");
      await c.initialize();
      // an answer of 70,000 bytes (a 64-bit length) ending in multi-byte characters
      const big = await c.request(1, "command/exec", {
        command: ["sh", "-c", "head -c 70000 /dev/zero | tr '\\0' a; printf 'é€😀'"],
        sandboxPolicy: full,
      });
      assert.equal(big.result?.stdout, "a".repeat(70000) + "é€😀");
      // a request of 100 KB in one frame (64-bit length), one of 300 bytes (16-bit)
      const long = await c.request(2, "command/exec", { command: ["printf", "%s", "x".repeat(100000)], sandboxPolicy: full });
      assert.equal(long.result?.stdout.length, 100000);
      const mid = await c.request(3, "command/exec", { command: ["printf", "%s", "y".repeat(300)], sandboxPolicy: full });
      assert.equal(mid.result?.stdout, "y".repeat(300));
      // 20 in flight: each answered in a message of its own
      const all = await Promise.all(Array.from({ length: 20 }, (_, i) => c.request(10 + i, "thread/loaded/list", {})));
      all.forEach((m) => assert.deepEqual(m.result?.data, []));
      c.ws.close(1000, "done");
      assert.deepEqual(await c.closed, { code: 1000, reason: "done" }); // the daemon's close frame echoes ours
      assert.equal(c.error, null);
      await ended(d, 1, "closed"); // it got ours and sent its own: no timeout, no error
    } finally {
      await d.stop();
    }
  });

  test(`${name}: fragments with pings between them, a character cut between fragments`, LIMITS, async () => {
    const d = await listenDaemon(listen, [], undefined, INFO);
    try {
      const c = await open(d);
      await c.initialize();
      c.ws.ping("p0");
      const bytes = Buffer.from(
        JSON.stringify({ id: 1, method: "command/exec", params: { command: ["printf", "%s", "é€😀"], sandboxPolicy: full } }),
      );
      const emoji = bytes.indexOf(Buffer.from("😀"));
      const euro = bytes.indexOf(Buffer.from("€"));
      // 5 frames: cut inside €, an empty continuation, cut inside 😀, then the rest
      c.fragments(bytes, [euro + 1, euro + 1, emoji + 2, emoji + 3], (i) => c.ws.ping(`p${i}`));
      const m = await c.answer(1);
      assert.equal(m.result?.stdout, "é€😀");
      await new Promise((r) => setTimeout(r, 50)); // pongs answer pings in order; the last one too
      assert.deepEqual(
        c.events.filter((e) => !e.startsWith("notification:")),
        ["answer:0", "pong:p0", "pong:p1", "pong:p2", "pong:p3", "pong:p4", "answer:1"],
      );
      c.ws.ping(); // an empty one
      await new Promise<void>((r) => c.ws.once("pong", (data) => (assert.equal(data.length, 0), r())));
      c.ws.close(1000);
      assert.equal((await c.closed).code, 1000);
      assert.equal(c.error, null);
    } finally {
      await d.stop();
    }
  });

  test(`${name}: a message over --max-line-bytes is refused with 1009, whole or in fragments`, LIMITS, async () => {
    const d = await listenDaemon(listen, ["--max-line-bytes", "4096"], undefined, INFO);
    try {
      const one = await open(d);
      await one.initialize();
      const ok = await one.request(1, "command/exec", { command: ["printf", "%s", "z".repeat(3900)], sandboxPolicy: full });
      assert.equal(ok.result?.stdout.length, 3900); // under the limit: served
      one.ws.send(JSON.stringify({ id: 2, method: "thread/loaded/list", params: { pad: "x".repeat(5000) } }));
      assert.equal((await one.closed).code, 1009);
      assert.equal(one.messages.find((m) => m.id === 2), undefined);
      const frags = await open(d);
      await frags.initialize();
      frags.fragments(Buffer.from(`{"id":3,"method":"thread/loaded/list","params":{"pad":"${"x".repeat(6000)}"}}`), [3000]);
      assert.equal((await frags.closed).code, 1009); // the fragments add up past the limit
      assert.equal(frags.messages.find((m) => m.id === 3), undefined);
      for (const c of [one, frags]) assert.equal(c.error, null);
      await ended(d, 1, "closed"); // both close frames went each time
      await ended(d, 2, "closed");
      const after = await open(d); // the daemon serves on
      await after.initialize();
      after.ws.close(1000);
      await after.closed;
    } finally {
      await d.stop();
    }
  });

  test(`${name}: text that is not UTF-8 is refused with 1007, also across fragments`, LIMITS, async () => {
    const d = await listenDaemon(listen, [], undefined, INFO);
    try {
      const bad = [
        { bytes: Buffer.from([0x7b, 0xff, 0x7d]), cuts: [] }, // a byte UTF-8 never has
        { bytes: Buffer.from([0x7b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]), cuts: [] }, // a surrogate
        { bytes: Buffer.from([0x7b, 0x22, 0xc0, 0xaf, 0x22, 0x7d]), cuts: [] }, // overlong '/'
        { bytes: Buffer.from([0x7b, 0x22, 0xe2, 0x82, 0x22, 0x7d]), cuts: [4] }, // € cut short, then '"'
      ];
      for (const [i, b] of bad.entries()) {
        const c = await open(d);
        await c.initialize();
        c.fragments(b.bytes, b.cuts);
        assert.equal((await c.closed).code, 1007, `case ${i}`);
        assert.equal(c.error, null);
        await ended(d, i + 1, "closed");
      }
    } finally {
      await d.stop();
    }
  });

  test(`${name}: an unmasked client frame is refused with 1002`, LIMITS, async () => {
    const d = await listenDaemon(listen, [], undefined, INFO);
    try {
      const c = await open(d);
      await c.initialize();
      c.ws.send(JSON.stringify({ id: 1, method: "thread/loaded/list", params: {} }), { mask: false });
      assert.equal((await c.closed).code, 1002);
      assert.equal(c.messages.find((m) => m.id === 1), undefined);
      assert.equal(c.error, null);
    } finally {
      await d.stop();
    }
  });

  test(`${name}: a binary message is dropped and logged; the connection goes on`, LIMITS, async () => {
    const d = await listenDaemon(listen, [], undefined, INFO);
    try {
      const c = await open(d);
      await c.initialize();
      const req = Buffer.from(JSON.stringify({ id: 1, method: "thread/loaded/list", params: {} }));
      c.ws.send(req, { binary: true });
      const m = await c.request(2, "thread/loaded/list", {});
      assert.deepEqual(m.result?.data, []);
      assert.deepEqual(c.events.filter((e) => e.startsWith("answer:")), ["answer:0", "answer:2"]); // none for 1
      assert.ok(d.log().includes(`ws #1: a binary message (${req.length} bytes) ignored`), d.log());
      c.ws.close(1000);
      assert.equal((await c.closed).code, 1000);
      assert.equal(c.error, null);
    } finally {
      await d.stop();
    }
  });

  test(`${name}: the daemon's close (SIGTERM: 1001) is answered; it exits 0`, LIMITS, async () => {
    const d = await listenDaemon(listen, [], undefined, INFO);
    const c = await open(d);
    await c.initialize();
    const code = await d.stop();
    assert.equal((await c.closed).code, 1001);
    assert.equal(c.error, null);
    assert.equal(code, 0);
    assert.ok(d.log().includes("ws #1: disconnected (closed)"), d.log()); // ws's close frame came
  });
}
