/*
 * Shared by the socket tests: the real daemon started with --listen (ws:// or unix://) and
 * `app-server mock-model` playing a script, each in a scratch directory removed by stop().
 */
import { spawn as spawnChild, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { binary } from "./helpers.js";

const START_MS = 10000;

async function waitFor<T>(what: string, proc: ChildProcess, log: string, probe: () => T | null): Promise<T> {
  const deadline = Date.now() + START_MS;
  while (Date.now() < deadline) {
    const got = probe();
    if (got !== null) return got;
    if (proc.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${what} did not start: ${readFileSync(log, "utf8").slice(-2000)}`);
}

function read(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

async function stopped(proc: ChildProcess): Promise<number | null> {
  if (proc.exitCode !== null) return proc.exitCode;
  const done = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
  proc.kill("SIGTERM");
  return done;
}

/**
 * The two listeners every socket test runs on. scripts/clients-test.sh counts each test() in a
 * `for (...) of TRANSPORTS)` loop twice when it reports the suite skipped.
 */
export const TRANSPORTS = [["ws", "ws://127.0.0.1:0"], ["unix", "unix://DIR/app.sock"]] as const;

export interface Listening {
  url: string;
  dir: string;
  workspace: string;
  /** SIGTERM, its exit status, the scratch directory removed. */
  stop(): Promise<number | null>;
  /** The daemon's stderr so far (after stop(): all of it). */
  log(): string;
}

/** build/app-server --listen LISTEN (DIR in it: the scratch directory) with config.toml. */
export async function listenDaemon(
  listen: string,
  args: string[] = [],
  config?: string,
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<Listening> {
  const dir = mkdtempSync(join(tmpdir(), "asc-ts-ws-"));
  const home = join(dir, "home"), workspace = join(dir, "work"), log = join(dir, "stderr");
  mkdirSync(home);
  mkdirSync(workspace);
  if (config !== undefined) writeFileSync(join(home, "config.toml"), config);
  writeFileSync(log, "");
  const env: NodeJS.ProcessEnv = { ...process.env, CODEX_HOME: home, HOME: dir, ...extraEnv };
  delete env.OPENAI_API_KEY;
  delete env.CODEX_API_KEY;
  const proc = spawnChild(binary, ["--listen", listen.replace("DIR", dir), ...args], {
    env,
    stdio: ["ignore", "ignore", openSync(log, "w")],
  });
  const url = await waitFor("app-server --listen", proc, log, () => /listening on: (\S+)/.exec(read(log))?.[1] ?? null);
  let last: string | null = null;
  return {
    url,
    dir,
    workspace,
    async stop() {
      const code = await stopped(proc);
      last = read(log);
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
    log: () => last ?? read(log),
  };
}

/** `app-server mock-model` playing `responses`; its port. */
export async function mockModel(responses: unknown[]): Promise<{ port: number; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "asc-ts-mm-"));
  const script = join(dir, "script.json"), portFile = join(dir, "port"), log = join(dir, "stderr");
  writeFileSync(script, JSON.stringify(responses));
  writeFileSync(log, "");
  const proc = spawnChild(binary, ["mock-model", "--listen", "127.0.0.1:0", "--script", script, "--port-file", portFile], {
    stdio: ["ignore", "ignore", openSync(log, "w")],
  });
  const port = await waitFor("mock-model", proc, log, () => {
    const n = parseInt(read(portFile), 10);
    return Number.isFinite(n) && n > 0 ? n : null;
  });
  return {
    port,
    async stop() {
      await stopped(proc);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function mockConfig(port: number): string {
  return (
    'model = "mock-model"\nmodel_provider = "mock"\n[model_providers.mock]\nname = "mock"\n' +
    `base_url = "http://127.0.0.1:${port}/v1"\nwire_api = "responses"\n` +
    "request_max_retries = 0\nstream_max_retries = 0\n"
  );
}

const events = (...evs: unknown[]) => ({ events: [{ ev: "created" }, ...evs, { ev: "completed" }] });

/** A turn whose model runs `touch a.txt && echo hi` (an approval under "untrusted"), then says done. */
export const APPROVAL_SCRIPT = [
  events({ ev: "function_call", call_id: "c1", name: "exec_command", arguments: { cmd: "touch a.txt && echo hi" } }),
  events({ ev: "message", id: "m1", text: "done" }),
];
