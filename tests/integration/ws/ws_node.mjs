// RFC 6455 conformance of what the daemon sends, judged by node's own WebSocket (undici):
// it fails the connection on a masked server frame, bad UTF-8, a bad length encoding or a
// bad close. usage: node --experimental-websocket ws_node.mjs ws://127.0.0.1:PORT
const url = process.argv[2];
const fail = (msg) => { console.error("ws_node: " + msg); process.exit(1); };
const timer = setTimeout(() => fail("timed out"), 30000);
const ws = new WebSocket(url);
const waiting = new Map();
const request = (id, method, params) => new Promise((resolve) => {
	waiting.set(id, resolve);
	ws.send(JSON.stringify({ id, method, params }));
});
ws.onerror = (e) => fail("error event: " + (e.message || e.type));
ws.onmessage = (e) => {
	if (typeof e.data !== "string") fail("a binary message");
	if (e.data.endsWith("\n")) fail("a message with its line's newline");
	const m = JSON.parse(e.data);
	if (m.id !== undefined && waiting.has(m.id)) { waiting.get(m.id)(m); waiting.delete(m.id); }
};
ws.onopen = async () => {
	const init = await request(0, "initialize", { clientInfo: { name: "ws-node", version: "1" } });
	if (!init.result) fail("initialize: " + JSON.stringify(init));
	// 300,000 bytes of output: an answer framed with a 64-bit length
	const big = await request(1, "command/exec",
		{ command: ["sh", "-c", "head -c 300000 /dev/zero | tr '\\0' a; printf 'é€😀'"] });
	if (big.result?.stdout?.length !== 300000 + 4) fail("big answer: " + JSON.stringify(big).slice(0, 200));
	if (!big.result.stdout.endsWith("é€😀")) fail("UTF-8 mangled");
	// a 100 KB request in one frame (16-bit length is too small: the client uses 64-bit)
	const again = await request(2, "initialize",
		{ clientInfo: { name: "x".repeat(100000), version: "1" } });
	if (!again.error) fail("second initialize was not refused: " + JSON.stringify(again).slice(0, 200));
	// many requests in flight at once: every one answered, each in its own message
	const all = await Promise.all(Array.from({ length: 20 }, (_, i) =>
		request(10 + i, "command/exec", { command: ["echo", String(i)] })));
	all.forEach((m, i) => { if (m.result?.stdout !== i + "\n") fail("answer " + i + ": " + JSON.stringify(m)); });
	ws.close(1000, "done");
};
ws.onclose = (e) => {
	clearTimeout(timer);
	if (e.code !== 1000 || !e.wasClean) fail("close: code " + e.code + " clean " + e.wasClean);
	console.log("ws_node: ok");
	process.exit(0);
};
