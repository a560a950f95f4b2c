// What the codex-acp tests share: `app-server mock-model` with a script (every request
// recorded), a scratch CODEX_HOME and workspace, and an ACP editor: codex-acp spawned with
// CODEX_PATH pointing at our binary, spoken to in ACP's JSON-RPC lines on its stdio, the way
// an editor (JetBrains, Zed) drives it. Nothing here needs upstream codex installed.
import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const STEP_MS = 20000; // one ACP request of these tests ends well within this

// Where the codex-acp package was installed (scripts/clients-test.sh installs it), or null.
export function acpEntry() {
	const p = process.env.CODEX_ACP_ENTRY;
	return p && existsSync(p) ? p : null;
}

// The mock model: started on a free port; its port read from its stdout.
export async function startMock(script) {
	const dir = mkdtempSync(join(tmpdir(), "acp-mm-"));
	const spath = join(dir, "script.json");
	const record = join(dir, "record.jsonl");
	writeFileSync(spath, JSON.stringify(script));
	const proc = spawn(process.env.APP_SERVER_BIN,
		["mock-model", "--listen", "127.0.0.1:0", "--script", spath, "--record", record],
		{ stdio: ["ignore", "pipe", "ignore"] });
	const port = await new Promise((resolve, reject) => {
		const rl = createInterface({ input: proc.stdout });
		rl.once("line", (l) => resolve(Number(l)));
		proc.once("exit", (c) => reject(new Error(`mock-model exited with ${c}`)));
	});
	return {
		port,
		// The request bodies the mock received, in order.
		requests() {
			if (!existsSync(record)) return [];
			return readFileSync(record, "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l))
				.filter((r) => r.method === "POST" && /\/responses$/.test(r.path)).map((r) => r.body);
		},
		async stop() {
			const done = new Promise((r) => proc.once("exit", r));
			proc.kill("SIGTERM");
			await done;
			rmSync(dir, { recursive: true, force: true });
		},
	};
}

// A scratch CODEX_HOME whose config.toml points at the mock, a HOME and a workspace.
export function scratch(port) {
	const root = mkdtempSync(join(tmpdir(), "acp-"));
	const home = join(root, "codex-home"), ws = join(root, "ws");
	mkdirSync(home);
	mkdirSync(ws);
	writeFileSync(join(home, "config.toml"),
		'model = "mock-model"\nmodel_provider = "mock_provider"\n' +
		'approval_policy = "never"\nsandbox_mode = "workspace-write"\n\n' +
		"[model_providers.mock_provider]\nname = \"Mock provider\"\n" +
		`base_url = "http://127.0.0.1:${port}/v1"\nwire_api = "responses"\n` +
		"request_max_retries = 0\nstream_max_retries = 0\n");
	return { root, home, ws, remove: () => rmSync(root, { recursive: true, force: true }) };
}

// An ACP editor session on codex-acp: requests with ids, the agent's notifications kept,
// the agent's requests (permission) answered by a handler.
export class Editor {
	constructor(entry, s) {
		this.proc = spawn(process.execPath, [entry], {
			cwd: s.ws,
			env: {
				...process.env, CODEX_PATH: process.env.ACP_CODEX_PATH ?? process.env.APP_SERVER_BIN, CODEX_HOME: s.home,
				HOME: s.root, OPENAI_API_KEY: undefined,
				CODEX_API_KEY: undefined,
			},
			stdio: ["pipe", "pipe", "pipe"],
		});
		this.nextId = 1;
		this.pending = new Map();
		this.updates = [];
		this.waiters = [];
		this.stderr = "";
		this.onRequest = (m) => ({ error: { code: -32601, message: `no ${m.method} here` } });
		this.proc.stderr.on("data", (d) => { this.stderr += d; });
		createInterface({ input: this.proc.stdout }).on("line", (l) => this.line(l));
		this.exited = new Promise((r) => this.proc.once("exit", (code) => {
			for (const p of this.pending.values()) p.reject(new Error(`codex-acp exited (${code}): ${this.stderr.slice(-2000)}`));
			this.pending.clear();
			r(code);
		}));
	}

	line(l) {
		let m;
		try { m = JSON.parse(l); } catch { throw new Error(`codex-acp wrote a line that is not JSON: ${l}`); }
		if (m.method !== undefined && m.id !== undefined) {
			Promise.resolve(this.onRequest(m)).then((a) =>
				this.send({ jsonrpc: "2.0", id: m.id, ...("error" in a ? a : { result: a.result }) }));
		} else if (m.method !== undefined) {
			if (m.method !== "session/update") return;
			this.updates.push(m.params);
			this.waiters = this.waiters.filter((w) => !w(m.params));
		} else {
			const p = this.pending.get(m.id);
			if (p === undefined) return;
			this.pending.delete(m.id);
			p.resolve(m);
		}
	}

	send(m) { this.proc.stdin.write(JSON.stringify(m) + "\n"); }

	// The answer to a request (the whole message: result or error).
	request(method, params, ms = STEP_MS) {
		const id = this.nextId++;
		return new Promise((resolve, reject) => {
			const t = setTimeout(() => {
				this.pending.delete(id);
				reject(new Error(`${method}: no answer in ${ms} ms; codex-acp's stderr: ${this.stderr.slice(-2000)}`));
			}, ms);
			this.pending.set(id, {
				resolve: (m) => { clearTimeout(t); resolve(m); },
				reject: (e) => { clearTimeout(t); reject(e); },
			});
			this.send({ jsonrpc: "2.0", id, method, params });
		});
	}

	// The result of a request, or a thrown error naming the ACP error.
	async call(method, params, ms) {
		const m = await this.request(method, params, ms);
		if (m.error !== undefined) throw new Error(`${method} failed: ${JSON.stringify(m.error)}; codex-acp's stderr: ${this.stderr.slice(-2000)}`);
		return m.result;
	}

	// What an editor sends first: initialize, then session/new in the workspace.
	async open(ws) {
		const init = await this.call("initialize", {
			protocolVersion: 1,
			clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
			clientInfo: { name: "acp-test-editor", version: "0.1.0" },
		});
		const session = await this.call("session/new", { cwd: ws, mcpServers: [] });
		return { init, session };
	}

	// One prompt: its answer and the session/update notifications that came with it.
	async prompt(sessionId, text) {
		const from = this.updates.length;
		const result = await this.call("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
		// Notifications written before the answer have been read before it (one ordered pipe).
		return { result, updates: this.updates.slice(from).filter((u) => u.sessionId === sessionId) };
	}

	// The first update (already come or still to come) for which pred holds.
	waitUpdate(pred, what, ms = STEP_MS) {
		const seen = this.updates.find(pred);
		if (seen !== undefined) return Promise.resolve(seen);
		return new Promise((resolve, reject) => {
			const t = setTimeout(() => reject(new Error(`no ${what} in ${ms} ms`)), ms);
			this.waiters.push((u) => {
				if (!pred(u)) return false;
				clearTimeout(t);
				resolve(u);
				return true;
			});
		});
	}

	// codex-acp names a new session after its first turn (an ephemeral thread asks the model
	// for {"title"}, then thread/name/set; until then the title is the prompt's text): the
	// update carrying that title, once it came.
	title(sessionId, title) {
		return this.waitUpdate((u) => u.sessionId === sessionId &&
			u.update?.sessionUpdate === "session_info_update" && u.update.title === title,
		`session title "${title}"`);
	}

	// The editor closes: codex-acp stops its app-server at once, but a title generation's
	// 5 s rename-echo timer keeps node itself alive, so it gets SIGTERM after a grace.
	async close() {
		this.proc.stdin.end();
		const t = setTimeout(() => this.proc.kill("SIGTERM"), 1000);
		const k = setTimeout(() => this.proc.kill("SIGKILL"), 5000);
		await this.exited;
		clearTimeout(t);
		clearTimeout(k);
	}
}

// The text of the agent's message chunks among updates.
export function agentText(updates) {
	return updates.filter((u) => u.update?.sessionUpdate === "agent_message_chunk")
		.map((u) => u.update.content?.text ?? "").join("");
}
