/*
 * One connection to a daemon spawned as a child process, speaking JSON-RPC one message per line,
 * or to a daemon listening on ws:// or unix:// (connect(), ws.ts), one message per text frame.
 *
 * Rules this file keeps:
 * - Every line the daemon writes is parsed and routed in arrival order: responses settle their
 *   request, notifications go to their listeners, server requests to their handler (or to the
 *   safe default: decline approvals, refuse anything else with an error) and are always answered.
 * - The connection is over only when the child has exited AND its stdout is drained ("close"),
 *   so no message written before exit is lost; then every pending request fails with
 *   ConnectionClosedError naming the exit status and the end of the daemon's stderr. Over a
 *   socket: when the socket is gone (after the close handshake, or not), naming the close status.
 * - -32001 answers are retried with backoff and jitter (retry.ts) under a new id.
 * - close() ends stdin, waits for the daemon to exit, and kills it after a deadline.
 */
import { spawn as spawnChild, type ChildProcess } from "node:child_process";

import { ExecProcess } from "./exec.js";
import { ConnectionClosedError, ErrorCode, RequestTimeoutError, RpcError } from "./errors.js";
import { LineSplitter, DEFAULT_MAX_LINE_BYTES } from "./lines.js";
import type {
  ClientInfo,
  ClientNotificationMap,
  ClientRequestMap,
  CommandExecParams,
  InitializeCapabilities,
  InitializeResponse,
  ServerNotificationMap,
  ServerRequestMap,
} from "./protocol.js";
import { WebSocketClient } from "./ws.js";
import { backoffDelay, DEFAULT_RETRY, sleep, type RetryOptions } from "./retry.js";
import { resumeThread, startThread, type Thread } from "./thread.js";

/* Methods not in the protocol tables yet (threads, turns, ...) are untyped until they land. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Untyped = any;

/** Params of a client request, looked up by method name. */
export type ParamsOf<M extends string> = M extends keyof ClientRequestMap
  ? ClientRequestMap[M]["params"]
  : Untyped;
/** Result of a client request, looked up by method name. */
export type ResultOf<M extends string> = M extends keyof ClientRequestMap
  ? ClientRequestMap[M]["result"]
  : Untyped;
/** Params of a server notification, looked up by method name. */
export type NotificationOf<M extends string> = M extends keyof ServerNotificationMap
  ? ServerNotificationMap[M]
  : Untyped;
/** Params and answer of a server-to-client request, looked up by method name. */
export type ServerParamsOf<M extends string> = M extends keyof ServerRequestMap
  ? ServerRequestMap[M]["params"]
  : Untyped;
export type ServerResultOf<M extends string> = M extends keyof ServerRequestMap
  ? ServerRequestMap[M]["result"]
  : Untyped;

export type RequestId = string | number;

export interface ServerRequestContext {
  id: RequestId;
  method: string;
}
export type ServerRequestHandler<M extends string> = (
  params: ServerParamsOf<M>,
  ctx: ServerRequestContext,
) => ServerResultOf<M> | Promise<ServerResultOf<M>>;

export interface SpawnOptions {
  /** The daemon binary (default: $APP_SERVER_BIN, else "app-server" on PATH). */
  binary?: string;
  args?: string[];
  /** Variables set over this process's environment; undefined unsets one. */
  env?: Record<string, string | undefined>;
  cwd?: string;
  clientInfo?: ClientInfo;
  capabilities?: InitializeCapabilities;
  /** Where the daemon's stderr goes: kept (last 64 KiB, for error messages), ours, or nowhere. */
  stderr?: "pipe" | "inherit" | "ignore";
  /** Retry -32001 answers (default: 8 retries from 25 ms up to 2 s); false to never retry. */
  retry?: RetryOptions | false;
  /** Ceiling of one line from the daemon (default 512 MiB); past it the connection fails. */
  maxLineBytes?: number;
  /** How long close() waits for the daemon to exit before killing it (default 5000 ms). */
  shutdownTimeoutMs?: number;
  /** Called with errors no caller can receive (a listener that threw, an unparsable line). */
  onError?: (err: unknown) => void;
}

/** connect(): a daemon started with --listen; the options of spawn() that still apply. */
export interface ConnectOptions
  extends Pick<SpawnOptions, "clientInfo" | "capabilities" | "retry" | "shutdownTimeoutMs" | "onError"> {
  /** The bearer token the daemon's --ws-auth asks for. */
  token?: string;
  /** Ceiling of one message from the daemon (default 512 MiB); past it the connection fails (1009). */
  maxMessageBytes?: number;
  /** Connect and upgrade within this (default 10000 ms). */
  connectTimeoutMs?: number;
}

export interface RequestOptions {
  timeoutMs?: number;
}

export interface ExitStatus {
  code: number | null;
  signal: string | null;
}

interface Pending {
  method: string;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  timer?: NodeJS.Timeout;
}

type AnyListener = (method: string, params: Untyped) => void;

const STDERR_KEEP = 64 * 1024;

/** The safe answer to a server request nobody handles: decline what asks for consent. */
export function defaultServerAnswer(method: string): unknown | undefined {
  switch (method) {
    case "item/commandExecution/requestApproval":
    case "item/fileChange/requestApproval":
      return { decision: "decline" };
    case "execCommandApproval":
    case "applyPatchApproval":
      return { decision: "denied" };
    case "mcpServer/elicitation/request":
      return { action: "decline" };
    case "item/permissions/requestApproval":
      return { permissions: {}, scope: "turn" };
    default:
      return undefined;
  }
}

export class Connection {
  /** The spawned daemon; null when connected to a listening one (see `socket`). */
  readonly child: ChildProcess | null;
  /** The WebSocket to a listening daemon (connect()); null for a spawned one. */
  readonly socket: WebSocketClient | null;
  /** The answer to initialize (set by spawn()). */
  initializeResult: InitializeResponse | undefined;

  private nextId = 1;
  private readonly pending = new Map<RequestId, Pending>();
  private readonly listeners = new Map<string, Set<(params: Untyped) => void>>();
  private readonly anyListeners = new Set<AnyListener>();
  private readonly closeListeners = new Set<(err: ConnectionClosedError) => void>();
  private readonly handlers = new Map<string, ServerRequestHandler<string>>();
  private readonly splitter: LineSplitter;
  private readonly retry: Required<RetryOptions> | null;
  private readonly shutdownTimeoutMs: number;
  private readonly onError: (err: unknown) => void;
  private stderrTail: Buffer = Buffer.alloc(0);
  private pauses = 0;
  private closing = false;
  private closedError: ConnectionClosedError | null = null;
  private startError: Error | null = null;
  private readonly exited: Promise<ExitStatus>;

  /** Spawn the daemon; with `socket` (see connect()), speak over that instead. */
  constructor(opts: SpawnOptions = {}, socket?: WebSocketClient) {
    this.retry = opts.retry === false ? null : { ...DEFAULT_RETRY, ...(opts.retry ?? {}) };
    this.shutdownTimeoutMs = opts.shutdownTimeoutMs ?? 5000;
    this.onError = opts.onError ?? ((e) => console.error("app-server client:", e));
    this.splitter = new LineSplitter(opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
    if (socket !== undefined) {
      this.child = null;
      this.socket = socket;
      this.exited = new Promise((resolve) => {
        socket.onClose = (code, reason) => {
          this.finishSocket(code, reason);
          resolve({ code: code === 1000 ? 0 : code, signal: null });
        };
      });
      socket.onMessage = (text) => this.onLine(text);
      socket.onError = (err) => this.onError(err);
      return;
    }
    this.socket = null;
    const binary = opts.binary ?? process.env.APP_SERVER_BIN ?? "app-server";
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const [k, v] of Object.entries(opts.env ?? {})) {
      if (v === undefined) delete env[k];
      else env[k] = v;
    }
    const stderr = opts.stderr ?? "pipe";
    const child = spawnChild(binary, opts.args ?? [], {
      cwd: opts.cwd,
      env,
      stdio: ["pipe", "pipe", stderr],
    });
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.on("error", (err) => {
        this.startError = new Error(`cannot run app-server (${binary}): ${err.message}`);
        // No "close" follows a failed spawn on every node version: settle here too.
        if (child.pid === undefined) {
          this.finish(null, null);
          resolve({ code: null, signal: null });
        }
      });
      child.on("close", (code, signal) => {
        this.finish(code, signal);
        resolve({ code, signal });
      });
    });
    child.stdin?.on("error", () => {
      /* EPIPE: the daemon is gone; "close" reports it. */
    });
    child.stdout?.on("data", (chunk: Buffer) => this.onData(chunk));
    child.stdout?.on("end", () => {
      const last = this.splitter.end();
      if (last !== undefined) this.onLine(last);
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      this.stderrTail = Buffer.concat([this.stderrTail, chunk]);
      if (this.stderrTail.length > STDERR_KEEP)
        this.stderrTail = this.stderrTail.subarray(this.stderrTail.length - STDERR_KEEP);
    });
  }

  /** Send initialize (and the initialized notification); spawn() does this for you. */
  async initialize(clientInfo?: ClientInfo, capabilities?: InitializeCapabilities) {
    const info = clientInfo ?? { name: "app-server-client-ts", version: "0.1.0" };
    const params = capabilities === undefined ? { clientInfo: info } : { clientInfo: info, capabilities };
    this.initializeResult = await this.request("initialize", params);
    this.notify("initialized");
    return this.initializeResult;
  }

  /** Send a request; the result's type is looked up by method name. -32001 is retried. */
  async request<M extends string>(
    method: M,
    params?: ParamsOf<M>,
    opts: RequestOptions = {},
  ): Promise<ResultOf<M>> {
    for (let attempt = 0; ; attempt++) {
      try {
        return (await this.send(method, params ?? {}, opts)) as ResultOf<M>;
      } catch (err) {
        const again =
          err instanceof RpcError &&
          err.code === ErrorCode.Overloaded &&
          this.retry !== null &&
          attempt < this.retry.retries;
        if (!again) throw err;
        await sleep(backoffDelay(attempt, this.retry ?? DEFAULT_RETRY));
      }
    }
  }

  /** Run a command: output as an async iterator, write/resize/terminate, and the result. */
  exec(params: CommandExecParams): ExecProcess {
    return new ExecProcess(this, params);
  }

  /** thread/start (reference ThreadStartParams); -32601 until the daemon has threads. */
  startThread(params: Record<string, unknown> = {}): Promise<Thread> {
    return startThread(this, params);
  }

  /** thread/resume of a stored thread. */
  resumeThread(threadId: string, params: Record<string, unknown> = {}): Promise<Thread> {
    return resumeThread(this, threadId, params);
  }

  /** Send a client notification. */
  notify<M extends string>(
    method: M,
    params?: M extends keyof ClientNotificationMap ? ClientNotificationMap[M] : Untyped,
  ): void {
    this.write(params === undefined ? { method } : { method, params });
  }

  /** Listen to one server notification; returns the function that stops listening. */
  on<M extends string>(method: M, cb: (params: NotificationOf<M>) => void): () => void {
    let set = this.listeners.get(method);
    if (set === undefined) this.listeners.set(method, (set = new Set()));
    const s = set;
    s.add(cb);
    return () => void s.delete(cb);
  }

  /** Listen to every server notification. */
  onAny(cb: AnyListener): () => void {
    this.anyListeners.add(cb);
    return () => void this.anyListeners.delete(cb);
  }

  /** Called once when the connection ends (the daemon exited or could not start). */
  onClose(cb: (err: ConnectionClosedError) => void): () => void {
    if (this.closedError !== null) {
      queueMicrotask(() => cb(this.closedError as ConnectionClosedError));
      return () => undefined;
    }
    this.closeListeners.add(cb);
    return () => void this.closeListeners.delete(cb);
  }

  /** Answer a server-to-client request (e.g. an approval); replaces the safe default. */
  handle<M extends string>(method: M, handler: ServerRequestHandler<M>): () => void {
    this.handlers.set(method, handler as ServerRequestHandler<string>);
    return () => {
      if (this.handlers.get(method) === handler) this.handlers.delete(method);
    };
  }

  /** The error that ended the connection, or null while it is open. */
  get closed(): ConnectionClosedError | null {
    return this.closedError;
  }

  /**
   * Stop reading the daemon's output (nested: as many resumeReading() calls undo it). While a
   * request waits for its answer, reading goes on regardless: the answer is behind the output,
   * and a consumer awaiting a request inside its loop must not wait forever.
   */
  pauseReading(): void {
    this.pauses++;
    this.updateReading();
  }

  resumeReading(): void {
    if (this.pauses > 0) this.pauses--;
    this.updateReading();
  }

  private updateReading(): void {
    const want = this.pauses === 0 || this.pending.size > 0 || this.closing;
    if (this.socket !== null) {
      if (want && this.socket.isPaused()) this.socket.resume();
      else if (!want && !this.socket.isPaused()) this.socket.pause();
      return;
    }
    const stdout = this.child?.stdout ?? null;
    if (stdout === null) return;
    if (want && stdout.isPaused()) stdout.resume();
    else if (!want && !stdout.isPaused()) stdout.pause();
  }

  /**
   * Close stdin, wait for the daemon to exit, kill it after the deadline. Over a socket: the
   * close handshake (1000), the socket dropped after the deadline; code 0 when the daemon
   * answered with 1000, else its close status (1006: none came).
   */
  async close(timeoutMs: number = this.shutdownTimeoutMs): Promise<ExitStatus> {
    this.closing = true; // read to the end, whoever paused reading
    this.updateReading();
    if (this.socket !== null) return this.closeSocket(this.socket, timeoutMs);
    const child = this.child as ChildProcess;
    if (this.closedError === null) child.stdin?.end();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), timeoutMs);
    });
    const first = await Promise.race([this.exited, late]);
    clearTimeout(timer);
    if (first !== "late") return first;
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 1000);
    const status = await this.exited;
    clearTimeout(killer);
    return status;
  }

  private async closeSocket(socket: WebSocketClient, timeoutMs: number): Promise<ExitStatus> {
    socket.close(1000);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), timeoutMs);
    });
    const first = await Promise.race([this.exited, late]);
    clearTimeout(timer);
    if (first !== "late") return first;
    socket.destroy(); // the daemon did not answer our close
    return this.exited;
  }

  /** Wait for the daemon to exit on its own. */
  wait(): Promise<ExitStatus> {
    return this.exited;
  }

  /** The last bytes the daemon wrote to stderr (with stderr: "pipe"). */
  get stderr(): string {
    return this.stderrTail.toString("utf8");
  }

  private send(method: string, params: unknown, opts: RequestOptions): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const p: Pending = { method, resolve, reject };
      if (opts.timeoutMs !== undefined) {
        const ms = opts.timeoutMs;
        p.timer = setTimeout(() => {
          this.pending.delete(id);
          this.updateReading();
          reject(new RequestTimeoutError(method, ms));
        }, ms);
      }
      this.pending.set(id, p);
      this.updateReading();
      try {
        this.write({ id, method, params });
      } catch (err) {
        this.pending.delete(id);
        clearTimeout(p.timer);
        reject(err);
      }
    });
  }

  private write(msg: unknown): void {
    if (this.closedError !== null) throw this.closedError;
    if (this.socket !== null) this.socket.sendText(JSON.stringify(msg));
    else this.child?.stdin?.write(JSON.stringify(msg) + "\n");
  }

  private onData(chunk: Buffer): void {
    let lines: string[];
    try {
      lines = this.splitter.push(chunk);
    } catch (err) {
      this.onError(err);
      this.child?.kill("SIGKILL");
      return;
    }
    for (const line of lines) this.onLine(line);
  }

  private onLine(line: string): void {
    if (line.trim() === "") return;
    let msg: Untyped;
    try {
      msg = JSON.parse(line);
    } catch (err) {
      this.onError(new Error(`unparsable line from app-server: ${line.slice(0, 200)}`));
      return;
    }
    if (msg === null || typeof msg !== "object") return;
    if (typeof msg.method === "string" && msg.id !== undefined && msg.id !== null)
      void this.onServerRequest(msg.id, msg.method, msg.params);
    else if (typeof msg.method === "string") this.onNotification(msg.method, msg.params);
    else if (msg.id !== undefined) this.onResponse(msg);
  }

  private onResponse(msg: Untyped): void {
    const p = this.pending.get(msg.id);
    if (p === undefined) return; // timed out, or not ours
    this.pending.delete(msg.id);
    this.updateReading();
    clearTimeout(p.timer);
    if (msg.error !== undefined && msg.error !== null) {
      const e = msg.error;
      p.reject(new RpcError(p.method, Number(e.code), String(e.message), e.data));
    } else p.resolve(msg.result);
  }

  private onNotification(method: string, params: Untyped): void {
    const run = (f: () => void) => {
      try {
        f();
      } catch (err) {
        this.onError(err);
      }
    };
    for (const cb of [...(this.listeners.get(method) ?? [])]) run(() => cb(params));
    for (const cb of [...this.anyListeners]) run(() => cb(method, params));
  }

  private async onServerRequest(id: RequestId, method: string, params: Untyped): Promise<void> {
    const handler = this.handlers.get(method);
    let reply: Record<string, unknown>;
    try {
      if (handler !== undefined) reply = { id, result: (await handler(params, { id, method })) ?? {} };
      else {
        const answer = defaultServerAnswer(method);
        reply =
          answer !== undefined
            ? { id, result: answer }
            : { id, error: { code: ErrorCode.MethodNotFound, message: `no handler for ${method}` } };
      }
    } catch (err) {
      const code = err instanceof RpcError ? err.code : ErrorCode.InternalError;
      const message = err instanceof Error ? err.message : String(err);
      reply = { id, error: { code, message } };
    }
    try {
      this.write(reply);
    } catch {
      /* the connection ended meanwhile: nobody is waiting for this answer */
    }
  }

  private finish(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.closedError !== null) return;
    const tail = this.stderr.trim().split("\n").slice(-5).join("\n");
    const why =
      this.startError !== null
        ? this.startError.message
        : signal !== null
          ? `app-server was killed by ${signal}`
          : `app-server exited with status ${code}`;
    this.settle(
      new ConnectionClosedError(
        tail !== "" && this.startError === null ? `${why}; its stderr ends with:\n${tail}` : why,
        code,
        signal,
      ),
    );
  }

  private finishSocket(code: number, reason: string): void {
    if (this.closedError !== null) return;
    const url = this.socket?.url ?? "";
    this.settle(
      new ConnectionClosedError(
        code === 1006
          ? `the connection to ${url} ended without a close frame`
          : `the daemon at ${url} closed the connection (${code}${reason ? `: ${reason}` : ""})`,
        code === 1000 ? 0 : code,
        null,
      ),
    );
  }

  /** The connection is over: every pending request and close listener learns why. */
  private settle(err: ConnectionClosedError): void {
    this.closedError = err;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(this.closedError);
    }
    this.pending.clear();
    for (const cb of [...this.closeListeners]) {
      try {
        cb(this.closedError);
      } catch (err) {
        this.onError(err);
      }
    }
    this.closeListeners.clear();
  }
}

/** Start a daemon and complete the initialize handshake. */
export async function spawn(opts: SpawnOptions = {}): Promise<Connection> {
  return initialized(new Connection(opts), opts);
}

/**
 * Connect to a daemon started with --listen (ws://HOST:PORT or unix:///PATH) and complete the
 * initialize handshake. A refused upgrade (a 401 from --ws-auth) or a socket error rejects with
 * ConnectionClosedError.
 */
export async function connect(url: string, opts: ConnectOptions = {}): Promise<Connection> {
  let socket: WebSocketClient;
  try {
    socket = await WebSocketClient.connect(url, {
      token: opts.token,
      maxMessageBytes: opts.maxMessageBytes,
      timeoutMs: opts.connectTimeoutMs,
    });
  } catch (err) {
    throw new ConnectionClosedError(`cannot connect to ${url}: ${(err as Error).message}`, null, null);
  }
  return initialized(new Connection(opts, socket), opts);
}

async function initialized(conn: Connection, opts: SpawnOptions): Promise<Connection> {
  try {
    await conn.initialize(opts.clientInfo, opts.capabilities);
  } catch (err) {
    await conn.close(1000).catch(() => undefined);
    throw err;
  }
  return conn;
}
