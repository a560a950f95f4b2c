/*
 * A small RFC 6455 WebSocket client on node's `net` (Node 18 has no global WebSocket, and the
 * package takes no runtime dependency): ws://HOST:PORT[/PATH] over TCP, unix:///PATH for the
 * same framing over a Unix socket (the daemon's `--listen unix://PATH`).
 *
 * Rules it keeps:
 * - The upgrade's Sec-WebSocket-Accept must be the SHA-1 of our random key (RFC 6455 4.2.2);
 *   anything but a 101 is refused with its status line and the body's first line, so a 401
 *   from the daemon's --ws-auth says why.
 * - Our frames are masked with a fresh key; the server's must not be (close 1002 otherwise).
 * - A message that its frame header would take past maxMessageBytes is refused at that header
 *   (close 1009), before its payload is buffered; control frames are at most 125 bytes, whole.
 * - Ping is answered with pong, also between the fragments of a message; a close is answered
 *   once and the socket ended; onClose fires once, when the socket is gone.
 */
import { createHash, randomBytes } from "node:crypto";
import { connect as netConnect, type Socket } from "node:net";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const MAX_HANDSHAKE = 16 * 1024;
export const Opcode = { Continuation: 0, Text: 1, Binary: 2, Close: 8, Ping: 9, Pong: 10 } as const;

/** A protocol failure; `code` is the close status sent for it (1002, 1007, 1009). */
export class WebSocketError extends Error {
  constructor(
    message: string,
    readonly code = 1002,
  ) {
    super(message);
    this.name = "WebSocketError";
  }
}

export interface WebSocketOptions {
  /** The bearer token the daemon's --ws-auth asks for (the upgrade's Authorization header). */
  token?: string;
  /** The longest message accepted (default 512 MiB). */
  maxMessageBytes?: number;
  /** Connect and upgrade within this (default 10000 ms). */
  timeoutMs?: number;
}

export type FrameEvent =
  | { kind: "text" | "binary" | "ping" | "pong"; data: Buffer }
  | { kind: "close"; code: number; reason: string };

/** Where a URL points: a TCP address or a Unix socket path, with the request's Host and path. */
export function parseTarget(url: string): { tcp?: { host: string; port: number }; path?: string; host: string; resource: string } {
  const u = new URL(url);
  if (u.protocol === "ws:") {
    if (u.port === "") throw new Error(`${url}: expected ws://HOST:PORT`);
    const host = u.hostname.replace(/^\[(.*)\]$/, "$1");
    return { tcp: { host, port: Number(u.port) }, host: u.host, resource: (u.pathname || "/") + u.search };
  }
  if (u.protocol === "unix:") {
    const path = decodeURIComponent(u.host + u.pathname);
    if (path === "") throw new Error(`${url}: expected unix:///PATH`);
    return { path, host: "localhost", resource: "/" };
  }
  throw new Error(`${url}: the scheme must be ws:// or unix://`);
}

export function acceptKey(key: string): string {
  return createHash("sha1").update(key + GUID).digest("base64");
}

/** One masked client frame. */
export function encodeFrame(opcode: number, payload: Buffer, fin = true): Buffer {
  const n = payload.length;
  const head = Buffer.alloc(n < 126 ? 2 : n < 65536 ? 4 : 10);
  head[0] = (fin ? 0x80 : 0) | opcode;
  if (n < 126) head[1] = 0x80 | n;
  else if (n < 65536) {
    head[1] = 0x80 | 126;
    head.writeUInt16BE(n, 2);
  } else {
    head[1] = 0x80 | 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  const key = randomBytes(4);
  const body = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) body[i] = payload[i] ^ key[i & 3];
  return Buffer.concat([head, key, body]);
}

function closePayload(code: number, reason: string): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(code, 0);
  return Buffer.concat([b, Buffer.from(reason).subarray(0, 123)]);
}

/** Bytes in, events out; reassembles fragmented messages. Sans I/O. */
export class FrameReader {
  private bufs: Buffer[] = [];
  private have = 0;
  private parts: Buffer[] = [];
  private size = 0;
  private opcode: number | null = null; // the data message being reassembled
  private head: { fin: boolean; opcode: number; at: number; n: number } | null = null;

  constructor(readonly maxMessageBytes: number) {}

  feed(chunk: Buffer): FrameEvent[] {
    this.bufs.push(chunk);
    this.have += chunk.length;
    const out: FrameEvent[] = [];
    for (;;) {
      const ev = this.next();
      if (ev === null) return out;
      if (ev !== undefined) out.push(ev);
    }
  }

  private peek(n: number): Buffer | null {
    if (this.have < n) return null;
    if (this.bufs[0].length < n) this.bufs = [Buffer.concat(this.bufs)];
    return this.bufs[0];
  }

  private take(n: number): Buffer {
    const out: Buffer[] = [];
    let need = n;
    while (need > 0) {
      const b = this.bufs[0];
      if (b.length <= need) {
        out.push(b);
        this.bufs.shift();
        need -= b.length;
      } else {
        out.push(b.subarray(0, need));
        this.bufs[0] = b.subarray(need);
        need = 0;
      }
    }
    this.have -= n;
    return out.length === 1 ? out[0] : Buffer.concat(out);
  }

  /** The next event; undefined for a fragment that completes nothing; null when data is short. */
  private next(): FrameEvent | undefined | null {
    if (this.head === null) {
      const b = this.peek(2);
      if (b === null) return null;
      const fin = (b[0] & 0x80) !== 0, opcode = b[0] & 0x0f;
      let n = b[1] & 0x7f, at = 2;
      if (b[0] & 0x70) throw new WebSocketError("a frame with RSV bits set");
      if (b[1] & 0x80) throw new WebSocketError("a masked frame from the server");
      if (n === 126) {
        const e = this.peek(4);
        if (e === null) return null;
        n = e.readUInt16BE(2);
        at = 4;
      } else if (n === 127) {
        const e = this.peek(10);
        if (e === null) return null;
        const big = e.readBigUInt64BE(2);
        n = big > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(big);
        at = 10;
      }
      const control = opcode >= 8;
      if (control && (n > 125 || !fin)) throw new WebSocketError("a control frame longer than 125 bytes or fragmented");
      if (![0, 1, 2, 8, 9, 10].includes(opcode)) throw new WebSocketError(`a frame with the reserved opcode ${opcode}`);
      if (!control) {
        if (opcode === Opcode.Continuation && this.opcode === null)
          throw new WebSocketError("a continuation frame outside a message");
        if (opcode !== Opcode.Continuation && this.opcode !== null)
          throw new WebSocketError("a new message inside a fragmented one");
        if (this.size + n > this.maxMessageBytes)
          throw new WebSocketError(`a message longer than ${this.maxMessageBytes} bytes`, 1009);
      }
      this.head = { fin, opcode, at, n };
    }
    const h = this.head;
    if (this.have < h.at + h.n) return null;
    this.take(h.at);
    const payload = this.take(h.n);
    this.head = null;
    switch (h.opcode) {
      case Opcode.Ping:
        return { kind: "ping", data: payload };
      case Opcode.Pong:
        return { kind: "pong", data: payload };
      case Opcode.Close:
        if (payload.length === 1) throw new WebSocketError("a close frame with a 1-byte payload");
        return {
          kind: "close",
          code: payload.length >= 2 ? payload.readUInt16BE(0) : 1005,
          reason: payload.subarray(2).toString("utf8"),
        };
    }
    if (h.opcode !== Opcode.Continuation) this.opcode = h.opcode;
    this.parts.push(payload);
    this.size += h.n;
    if (!h.fin) return undefined;
    const msg = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts);
    const kind = this.opcode === Opcode.Text ? "text" : "binary";
    this.parts = [];
    this.size = 0;
    this.opcode = null;
    if (kind === "text") {
      try {
        new TextDecoder("utf-8", { fatal: true }).decode(msg);
      } catch {
        throw new WebSocketError("a text message that is not UTF-8", 1007);
      }
    }
    return { kind, data: msg };
  }
}

/** The answer's head (status line, headers) checked: a 101 carrying our accept key. */
function checkHandshake(head: string, body: Buffer, key: string): void {
  const [status, ...lines] = head.split("\r\n");
  const headers = new Map<string, string>();
  for (const l of lines) {
    const i = l.indexOf(":");
    if (i > 0) headers.set(l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim());
  }
  if (status.split(" ")[1] !== "101") {
    const why = body.toString("utf8").trim().split("\n")[0];
    throw new Error(`the daemon refused the upgrade: ${status.trim()}${why ? `: ${why}` : ""}`);
  }
  if ((headers.get("upgrade") ?? "").toLowerCase() !== "websocket" || !/upgrade/i.test(headers.get("connection") ?? ""))
    throw new Error("the daemon's 101 is not a WebSocket upgrade");
  if (headers.get("sec-websocket-accept") !== acceptKey(key))
    throw new Error("the daemon's Sec-WebSocket-Accept does not match our key");
}

export class WebSocketClient {
  /** Each text message, in order. */
  onMessage: (text: string) => void = () => undefined;
  /** Once, when the socket is gone: the daemon's close status (1006: none came). */
  onClose: (code: number, reason: string) => void = () => undefined;
  /** A protocol failure or socket error (the connection is closing). */
  onError: (err: Error) => void = () => undefined;
  closeCode: number | null = null;
  closeReason = "";
  private closeSent = false;
  private closed = false;

  private constructor(
    readonly url: string,
    private readonly sock: Socket,
    private readonly reader: FrameReader,
  ) {}

  /** Connect and upgrade; rejects with the daemon's refusal (e.g. a 401) or a socket error. */
  static connect(url: string, opts: WebSocketOptions = {}): Promise<WebSocketClient> {
    const t = parseTarget(url);
    const key = randomBytes(16).toString("base64");
    const sock = t.tcp !== undefined ? netConnect({ host: t.tcp.host, port: t.tcp.port }) : netConnect({ path: t.path! });
    if (t.tcp !== undefined) sock.setNoDelay(true);
    return new Promise((resolve, reject) => {
      let buf = Buffer.alloc(0);
      let refusal: { head: string; body: Buffer } | null = null;
      const fail = (err: Error) => {
        clearTimeout(timer);
        sock.removeAllListeners();
        sock.on("error", () => undefined);
        sock.destroy();
        reject(err);
      };
      let timer = setTimeout(
        () => fail(new Error(`${url}: no upgrade within ${opts.timeoutMs ?? 10000} ms`)),
        opts.timeoutMs ?? 10000,
      );
      const finishRefusal = () => {
        try {
          checkHandshake(refusal!.head, refusal!.body, key);
        } catch (err) {
          fail(err as Error);
        }
      };
      sock.on("error", (err) => fail(new Error(`${url}: ${err.message}`)));
      sock.on("end", () => (refusal !== null ? finishRefusal() : fail(new Error(`${url}: the daemon closed the connection during the upgrade`))));
      sock.once("connect", () =>
        sock.write(
          [`GET ${t.resource} HTTP/1.1`, `Host: ${t.host}`, "Upgrade: websocket", "Connection: Upgrade",
            `Sec-WebSocket-Key: ${key}`, "Sec-WebSocket-Version: 13",
            ...(opts.token !== undefined ? [`Authorization: Bearer ${opts.token}`] : []), "", ""].join("\r\n"),
        ),
      );
      sock.on("data", (chunk: Buffer) => {
        if (refusal !== null) {
          refusal.body = Buffer.concat([refusal.body, chunk]);
          return;
        }
        buf = Buffer.concat([buf, chunk]);
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) {
          if (buf.length > MAX_HANDSHAKE) fail(new Error(`${url}: the daemon's upgrade answer is too long`));
          return;
        }
        const head = buf.subarray(0, end).toString("latin1");
        const rest = buf.subarray(end + 4);
        if (!head.startsWith("HTTP/1.1 101")) {
          // A refusal: its body (the reason) follows; wait for it a little.
          refusal = { head, body: rest };
          clearTimeout(timer);
          timer = setTimeout(finishRefusal, 500);
          return;
        }
        try {
          checkHandshake(head, rest, key);
        } catch (err) {
          fail(err as Error);
          return;
        }
        clearTimeout(timer);
        sock.removeAllListeners();
        const ws = new WebSocketClient(url, sock, new FrameReader(opts.maxMessageBytes ?? 512 * 1024 * 1024));
        ws.attach();
        resolve(ws);
        if (rest.length > 0) queueMicrotask(() => ws.onData(rest));
      });
    });
  }

  private attach(): void {
    this.sock.on("data", (chunk: Buffer) => this.onData(chunk));
    this.sock.on("error", (err) => this.onError(err));
    this.sock.on("end", () => this.sock.end());
    this.sock.on("close", () => {
      if (this.closed) return;
      this.closed = true;
      if (this.closeCode === null) this.closeCode = 1006;
      this.onClose(this.closeCode, this.closeReason);
    });
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    let events: FrameEvent[];
    try {
      events = this.reader.feed(chunk);
    } catch (err) {
      const e = err as WebSocketError;
      this.closeCode = e.code;
      this.closeReason = e.message;
      this.onError(e);
      this.close(e.code, e.message);
      this.sock.end();
      return;
    }
    for (const ev of events) {
      if (ev.kind === "text") this.onMessage(ev.data.toString("utf8"));
      else if (ev.kind === "ping") this.send(Opcode.Pong, ev.data);
      else if (ev.kind === "close") {
        this.closeCode = ev.code;
        this.closeReason = ev.reason;
        this.close(ev.code === 1005 || ev.code === 1006 ? 1000 : ev.code);
        this.sock.end();
        return;
      }
      // binary messages and pongs are not the protocol: dropped
    }
  }

  private send(opcode: number, payload: Buffer): void {
    if (!this.closeSent && !this.sock.destroyed) this.sock.write(encodeFrame(opcode, payload));
  }

  /** Send one text message; throws once the close handshake started. */
  sendText(text: string): void {
    if (this.closeSent || this.sock.destroyed) throw new Error("the WebSocket is closing");
    this.sock.write(encodeFrame(Opcode.Text, Buffer.from(text, "utf8")));
  }

  /** Start (or answer) the close handshake. */
  close(code = 1000, reason = ""): void {
    if (this.closeSent || this.sock.destroyed) return;
    this.sock.write(encodeFrame(Opcode.Close, closePayload(code, reason)));
    this.closeSent = true;
  }

  /** Drop the socket at once (a daemon that does not answer our close). */
  destroy(): void {
    this.sock.destroy();
  }

  pause(): void {
    this.sock.pause();
  }

  resume(): void {
    this.sock.resume();
  }

  isPaused(): boolean {
    return this.sock.isPaused();
  }
}
