'use strict';
/*
 * Code mode's host: runs one `exec` cell, the model's JavaScript, as an async module
 * (`exec_main.mjs`) in a fresh vm context holding only the globals upstream's V8 host gives
 * (tools, text, image, store, load, notify, exit, setTimeout, clearTimeout, ALL_TOOLS,
 * yield_control). The daemon embeds this file (codemode_js.c) and runs it as
 * `node --experimental-vm-modules -e <this>`, in the read-only sandbox without network: a vm
 * context is no security boundary, the sandbox is.
 *
 * Protocol: one JSON object per line on the child's own stdin/stdout (never the daemon's).
 *   daemon -> host: {t:"start", code, tools:[{name, description}], store:{key: value}}
 *                   {t:"result", id, value} | {t:"result", id, error}   (a nested call's end)
 *   host -> daemon: {t:"ready"}   (the script begins: exec's yield_time_ms counts from here)
 *                   {t:"text", text} {t:"image", url, detail} {t:"notify", text}
 *                   {t:"store", key, value} {t:"call", id, name, input} {t:"yield"}
 *                   {t:"done", error}   (error: null, or the text after "Script error:\n")
 * The host exits after `done`; pending timeouts do not keep it alive. stdin's EOF ends it.
 */
const vm = require('vm');
const fs = require('fs');

const LINE_MAX = 64 << 20; /* a line from the daemon, at most (its own bound is lower) */

/* Write one line whole, even on a pipe that says EAGAIN. */
function send(obj) {
	const b = Buffer.from(JSON.stringify(obj) + '\n');
	let off = 0;
	while (off < b.length) {
		try {
			off += fs.writeSync(1, b, off, b.length - off);
		} catch (e) {
			if (e.code !== 'EAGAIN')
				process.exit(1);
		}
	}
}

let pending = new Map(); /* nested calls waiting: id -> {resolve, reject} */
let nextId = 1;
let ctx = null;
let started = false;
let finished = false;

/* The end of the cell: reported once, then the process goes. */
function finish(error) {
	if (finished)
		return;
	finished = true;
	send({ t: 'done', error: error });
	process.exit(0);
}

/* An error's text as upstream reports it: its first line and the frames of the model's code. */
function errorText(e) {
	if (e === null || (typeof e !== 'object' && typeof e !== 'function'))
		return String(e);
	const head = `${e.name || 'Error'}: ${e.message}`;
	if (e.name === 'SyntaxError' || typeof e.stack !== 'string')
		return head;
	const frames = e.stack.split('\n').filter(l => /^\s+at /.test(l) && l.includes('exec_main.mjs'));
	return [head, ...frames].join('\n');
}

/* A value the model gave, as text (strings as they are, the rest as JSON). */
function asText(v) {
	if (typeof v === 'string')
		return v;
	try {
		const s = JSON.stringify(v);
		return s === undefined ? String(v) : s;
	} catch (e) {
		return String(v);
	}
}

/* Build the context and its globals; values handed in are made in its realm. */
function makeContext(tools, stored) {
	const c = vm.createContext(Object.create(null), { name: 'exec' });
	/* What V8 gives a context but upstream's isolate lacks: no console, no wasm, no shared memory. */
	vm.runInContext('delete globalThis.console; delete globalThis.WebAssembly; ' +
		'delete globalThis.Atomics; delete globalThis.SharedArrayBuffer;', c);
	const parse = vm.runInContext('JSON.parse', c);
	const timers = new Map();
	let nextTimer = 1;
	const g = {
		text: (v) => { send({ t: 'text', text: asText(v) }); },
		image: (v) => {
			const url = typeof v === 'string' ? v : v && (v.image_url || v.url);
			send({ t: 'image', url: String(url), detail: v && v.detail ? String(v.detail) : null });
		},
		notify: (v) => { send({ t: 'notify', text: asText(v) }); },
		store: (k, v) => {
			const s = JSON.stringify(v);
			stored.set(String(k), s);
			send({ t: 'store', key: String(k), value: s === undefined ? null : parse(s) });
		},
		load: (k) => {
			const s = stored.get(String(k));
			return s === undefined ? undefined : parse(s);
		},
		exit: () => { finish(null); },
		yield_control: () => { send({ t: 'yield' }); },
		setTimeout: (fn, ms, ...args) => {
			const id = nextTimer++;
			const h = setTimeout(() => { timers.delete(id); fn(...args); }, Number(ms) || 0);
			h.unref(); /* a pending timeout does not keep the cell alive */
			timers.set(id, h);
			return id;
		},
		clearTimeout: (id) => {
			const h = timers.get(id);
			if (h !== undefined) {
				clearTimeout(h);
				timers.delete(id);
			}
		},
	};
	const toolObj = {};
	for (const t of tools) {
		toolObj[t.name] = (input) => new Promise((resolve, reject) => {
			const id = nextId++;
			pending.set(id, { resolve, reject, parse });
			send({ t: 'call', id, name: t.name, input: input === undefined ? null : input });
		});
	}
	for (const [k, v] of Object.entries(g))
		c[k] = v;
	c.tools = toolObj;
	c.ALL_TOOLS = parse(JSON.stringify(tools.map(t => ({ name: t.name, description: t.description || '' }))));
	return c;
}

/* Run the model's code as the module exec_main.mjs; its settling ends the cell. */
async function run(msg) {
	const stored = new Map();
	for (const [k, v] of Object.entries(msg.store || {}))
		stored.set(k, JSON.stringify(v));
	ctx = makeContext(msg.tools || [], stored);
	send({ t: 'ready' });
	try {
		const mod = new vm.SourceTextModule(String(msg.code), { context: ctx, identifier: 'exec_main.mjs' });
		await mod.link(() => { throw new Error('import is not supported'); });
		await mod.evaluate();
		finish(null);
	} catch (e) {
		finish(errorText(e));
	}
}

/* A message from the daemon. */
function onMessage(msg) {
	if (msg.t === 'start' && !started) {
		started = true;
		run(msg);
	} else if (msg.t === 'result') {
		const p = pending.get(msg.id);
		if (p === undefined)
			return;
		pending.delete(msg.id);
		if (typeof msg.error === 'string')
			p.reject(msg.error); /* upstream rejects with the tool's text, not an Error */
		else
			p.resolve(msg.value === undefined ? undefined : p.parse(JSON.stringify(msg.value)));
	} else if (msg.t === 'terminate') {
		process.exit(0);
	}
}

let inbuf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
	inbuf += chunk;
	if (inbuf.length > LINE_MAX)
		process.exit(1);
	let nl;
	while ((nl = inbuf.indexOf('\n')) >= 0) {
		const line = inbuf.slice(0, nl);
		inbuf = inbuf.slice(nl + 1);
		if (line.length > 0)
			onMessage(JSON.parse(line));
	}
});
process.stdin.on('end', () => process.exit(0));
