// codex-acp 2.6.0 (npm @agentclientprotocol/codex-acp) against our binary, driven as an ACP
// editor drives it: initialize -> session/new -> session/prompt, with the model a scripted
// `app-server mock-model`. A text turn, a shell tool turn, two turns with history and an
// escalated command the editor allows or rejects (session/request_permission) must pass as
// they do against upstream codex 0.169. Run by scripts/clients-test.sh, which
// installs codex-acp into build/acp (skipped, with the reason, when npm is unreachable).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { acpEntry, agentText, Editor, scratch, startMock } from "./acp_util.mjs";

const entry = acpEntry();
const skip = entry === null ? "codex-acp is not installed (CODEX_ACP_ENTRY unset: npm unreachable?)" : false;

const created = { ev: "created" };
const completed = { ev: "completed" };
const say = (id, text) => ({ events: [created, { ev: "message", id, text }, completed] });
// The answer to codex-acp's title request, which follows each session's first turn.
const titled = (title) => say("m-title", JSON.stringify({ title }));
const TITLE_ASK = "generate a very short title";

// One editor session over a mock running script; body(editor, sessionId, mock, scratch).
async function withSession(script, body) {
	const mock = await startMock(script);
	const s = scratch(mock.port);
	const ed = new Editor(entry, s);
	try {
		const { init, session } = await ed.open(s.ws);
		assert.equal(init.protocolVersion, 1);
		assert.equal(typeof session.sessionId, "string");
		await body(ed, session, mock, s);
	} finally {
		await ed.close();
		await mock.stop();
		s.remove();
	}
}

// The user texts of a request's input, in order.
function userTexts(req) {
	return req.input.filter((i) => i.type === "message" && i.role === "user")
		.flatMap((i) => i.content.filter((c) => c.type === "input_text").map((c) => c.text));
}

// The session's own model requests (without the title request), checking the title request.
function sessionRequests(mock, firstPrompt) {
	const all = mock.requests();
	const isTitle = (r) => userTexts(r).some((t) => t.includes(TITLE_ASK));
	const titles = all.filter(isTitle);
	assert.equal(titles.length, 1, "one title request");
	assert.ok(userTexts(titles[0]).some((t) => t.includes(firstPrompt)));
	assert.equal(titles[0].text?.format?.type, "json_schema", JSON.stringify(titles[0].text));
	return all.filter((r) => !isTitle(r));
}

test("session/new answers with the configured model and modes", { skip }, async () => {
	await withSession([], async (ed, session) => {
		assert.ok(session.models.availableModels.length > 0, JSON.stringify(session.models));
		assert.ok(session.models.currentModelId.startsWith("mock-model"), session.models.currentModelId);
		assert.ok(session.modes.availableModes.length > 0);
	});
});

test("a text turn streams the model's answer and ends with end_turn", { skip }, async () => {
	const script = [say("m1", "Hello from the mock."), titled("Greeting the mock")];
	await withSession(script, async (ed, session, mock) => {
		const { result, updates } = await ed.prompt(session.sessionId, "say hello");
		assert.equal(result.stopReason, "end_turn");
		assert.equal(agentText(updates), "Hello from the mock.");
		await ed.title(session.sessionId, "Greeting the mock");
		const reqs = sessionRequests(mock, "say hello");
		assert.equal(reqs.length, 1);
		assert.ok(userTexts(reqs[0]).some((t) => t.includes("say hello")), JSON.stringify(userTexts(reqs[0])));
	});
});

test("a shell tool turn runs the command and reports it as a tool call", { skip }, async () => {
	const script = [
		{ events: [created, { ev: "function_call", call_id: "call-sh", name: "exec_command",
			arguments: { cmd: "echo acp-was-here > made.txt && echo printed", yield_time_ms: 5000 } }, completed] },
		say("m2", "The command ran."),
		titled("Running a shell command"),
	];
	await withSession(script, async (ed, session, mock, s) => {
		const { result, updates } = await ed.prompt(session.sessionId, "run the command");
		assert.equal(result.stopReason, "end_turn");
		assert.equal(readFileSync(join(s.ws, "made.txt"), "utf8"), "acp-was-here\n");
		const calls = updates.filter((u) => u.update.sessionUpdate === "tool_call");
		assert.equal(calls.length, 1, JSON.stringify(updates));
		assert.equal(calls[0].update.kind, "execute");
		const done = updates.filter((u) => u.update.sessionUpdate === "tool_call_update" &&
			u.update.toolCallId === calls[0].update.toolCallId && u.update.status === "completed");
		assert.equal(done.length, 1, JSON.stringify(updates));
		assert.equal(agentText(updates), "The command ran.");
		await ed.title(session.sessionId, "Running a shell command");
		// The model got the command's output back in the second request.
		const reqs = sessionRequests(mock, "run the command");
		assert.equal(reqs.length, 2);
		const out = reqs[1].input.find((i) => i.type === "function_call_output" && i.call_id === "call-sh");
		assert.ok(out !== undefined && out.output.includes("printed"), JSON.stringify(reqs[1].input.slice(-2)));
	});
});

test("two turns: the second request carries the first turn's history", { skip }, async () => {
	const script = [say("m1", "First answer."), titled("Two questions"), say("m2", "Second answer.")];
	await withSession(script, async (ed, session, mock) => {
		const one = await ed.prompt(session.sessionId, "first question");
		assert.equal(one.result.stopReason, "end_turn");
		assert.equal(agentText(one.updates), "First answer.");
		await ed.title(session.sessionId, "Two questions"); // the title request comes between the turns
		const two = await ed.prompt(session.sessionId, "second question");
		assert.equal(two.result.stopReason, "end_turn");
		assert.equal(agentText(two.updates), "Second answer.");
		const reqs = sessionRequests(mock, "first question");
		assert.equal(reqs.length, 2);
		const texts = userTexts(reqs[1]);
		const first = texts.findIndex((t) => t.includes("first question"));
		const second = texts.findIndex((t) => t.includes("second question"));
		assert.ok(first >= 0 && second > first, JSON.stringify(texts));
		const said = reqs[1].input.filter((i) => i.type === "message" && i.role === "assistant")
			.flatMap((i) => i.content.map((c) => c.text));
		assert.deepEqual(said, ["First answer."]);
	});
});

test("the codex-acp package is the one pinned", { skip }, () => {
	const pkg = join(entry, "..", "..", "package.json");
	assert.ok(existsSync(pkg));
	assert.equal(JSON.parse(readFileSync(pkg, "utf8")).version, "2.6.0");
});

// A command that asks (the model wants it outside the sandbox, mode "workspace-write": approval
// on-request, the user reviews): the editor gets session/request_permission, and its answer
// reaches the command. Allowed, it runs and the turn goes on; rejected, it never runs: the
// request offers accept / cancel as upstream's does (no decline), so codex-acp answers
// "cancel" and the turn ends cancelled before any other model request (upstream 0.169 alike).
async function escalated(answer, runs) {
	const script = [
		{ events: [created, { ev: "function_call", call_id: "call-esc", name: "exec_command",
			arguments: { cmd: "echo asked > asked.txt", sandbox_permissions: "require_escalated",
				justification: "needs to write" } }, completed] },
		say("m2", "Done asking."),
		titled("Asking first"),
	];
	await withSession(script, async (ed, session, mock, s) => {
		const asked = [];
		ed.onRequest = (m) => {
			asked.push(m);
			if (m.method !== "session/request_permission") return { error: { code: -32601, message: m.method } };
			const kind = answer === "allow" ? "allow_once" : "reject_once";
			const opt = m.params.options.find((o) => o.kind === kind);
			assert.ok(opt !== undefined, JSON.stringify(m.params.options));
			return { result: { outcome: { outcome: "selected", optionId: opt.optionId } } };
		};
		await ed.call("session/set_mode", { sessionId: session.sessionId, modeId: "workspace-write" });
		const { result, updates } = await ed.prompt(session.sessionId, "ask first");
		assert.equal(result.stopReason, runs ? "end_turn" : "cancelled");
		assert.deepEqual(asked.map((m) => m.method), ["session/request_permission"]);
		assert.equal(asked[0].params.sessionId, session.sessionId);
		assert.equal(existsSync(join(s.ws, "asked.txt")), runs);
		const reqs = mock.requests().filter((r) => !userTexts(r).some((t) => t.includes(TITLE_ASK)));
		assert.equal(reqs.length, runs ? 2 : 1);
		if (runs) {
			assert.ok(agentText(updates).endsWith("Done asking."), agentText(updates));
			const out = reqs[1].input.find((i) => i.type === "function_call_output" && i.call_id === "call-esc");
			assert.ok(out !== undefined && out.output.includes("Process exited with code 0"), JSON.stringify(out));
		}
	});
}

// (one top-level test() each: scripts/clients-test.sh counts them for its skip tally)
test("an escalated command asks the editor, who allows it: it runs", { skip }, () => escalated("allow", true));
test("an escalated command asks the editor, who rejects it: the turn is cancelled", { skip }, () => escalated("reject", false));
