// Bad input over the real transports. Sends what no well-behaved client sends and checks
// each gets its JSON-RPC error and that the server still answers the next request:
// malformed JSON (-32700, id null), invalid requests (-32600), unknown methods (-32601),
// wrong parameter types (-32602 naming the JSON path), an oversized line / body, and a
// flood of pipelined (stdio) or concurrent (HTTP) requests.
//
// usage: node bad_input.mjs [--max-bytes N] [--flood N] [--concurrency N] <server target>
//   --max-bytes  the server's message size limit (default 4 MiB); the oversized message
//                is one MiB larger
import "./lib/deps.mjs";
import { check, cleanupAll, parseArgs, resolveTarget, step, watchdog } from "./lib/harness.mjs";
import { StdioPeer, httpRequest } from "./lib/raw_rpc.mjs";

watchdog(240);
const { options, target } = parseArgs(process.argv.slice(2));
const maxBytes = Number(options["max-bytes"] ?? 4 * 1024 * 1024);
const floodCount = Number(options.flood ?? 2000);
const concurrency = Number(options.concurrency ?? 16);

const LEGACY = "2025-11-25";
const MODERN = "2026-07-28";
const BUSY = -32000;  // the retryable "server busy" answer of a full worker pool
const initializeParams = {
  protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "parity-bad-input", version: "1.0.0" },
};
const modernMeta = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "parity-bad-input", version: "1.0.0" },
};

// Raw lines and the error each must get. `id` is the id the answer must carry (null when
// the server cannot read one); `ids` lists the acceptable ids when either is defensible.
const cases = [
  { name: "malformed JSON", raw: '{"jsonrpc":"2.0","id":1,"method":"ping"', code: -32700, ids: [null] },
  { name: "not JSON at all", raw: "hello, server", code: -32700, ids: [null] },
  { name: "wrong jsonrpc version", raw: '{"jsonrpc":"1.0","id":"v1","method":"ping"}', code: -32600, ids: ["v1", null] },
  { name: "missing jsonrpc", raw: '{"id":"v2","method":"ping"}', code: -32600, ids: ["v2", null] },
  { name: "id null", raw: '{"jsonrpc":"2.0","id":null,"method":"ping"}', code: -32600, ids: [null] },
  { name: "id an object", raw: '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', code: -32600, ids: [null] },
  { name: "method not a string", raw: '{"jsonrpc":"2.0","id":"v3","method":42}', code: -32600, ids: ["v3", null] },
  { name: "a number", raw: "42", code: -32600, ids: [null] },
  { name: "a string", raw: '"ping"', code: -32600, ids: [null] },
  { name: "an empty array", raw: "[]", code: -32600, ids: [null] },
  { name: "unknown method", raw: '{"jsonrpc":"2.0","id":"u1","method":"parity/no_such_method"}', code: -32601, ids: ["u1"] },
  { name: "tools/list cursor a number", raw: '{"jsonrpc":"2.0","id":"p1","method":"tools/list","params":{"cursor":5}}',
    code: -32602, ids: ["p1"], path: "params.cursor" },
  { name: "tools/call name a number", raw: '{"jsonrpc":"2.0","id":"p2","method":"tools/call","params":{"name":7}}',
    code: -32602, ids: ["p2"], path: "params.name" },
  { name: "resources/read uri a number", raw: '{"jsonrpc":"2.0","id":"p3","method":"resources/read","params":{"uri":1}}',
    code: -32602, ids: ["p3"], path: "params.uri" },
];

function checkError(message, c) {
  check(message && typeof message.error === "object", `${c.name}: expected an error response`, message);
  check(message.jsonrpc === "2.0", `${c.name}: response lacks jsonrpc 2.0`, message);
  check(message.error.code === c.code, `${c.name}: expected code ${c.code}, got ${message.error.code}`, message);
  check(c.ids.some((id) => id === message.id), `${c.name}: expected id in ${JSON.stringify(c.ids)}`, message);
  check(typeof message.error.message === "string" && message.error.message.length > 0, `${c.name}: empty error message`, message);
  if (c.path) check(message.error.message.includes(c.path), `${c.name}: the message does not name ${c.path}`, message);
}

const oversized = () => JSON.stringify({ jsonrpc: "2.0", id: "big", method: "ping", params: { pad: "x".repeat(maxBytes + (1 << 20)) } });

if (target.kind === "stdio") await stdioSuite();
else await httpSuite();
await step("stop server", () => cleanupAll());
console.log("PASS");
process.exit(0);

async function stdioSuite() {
  const peer = new StdioPeer(target.command, target.args);
  let pings = 0;
  const stillServing = async (after) => {
    const id = `alive-${++pings}`;
    await peer.send({ jsonrpc: "2.0", id, method: "ping" });
    const answer = await peer.response(id, { what: `the ping after ${after}` });
    check(answer.result && !answer.error, `ping after ${after} failed`, answer);
  };

  await step("initialize (legacy handshake)", async () => {
    await peer.send({ jsonrpc: "2.0", id: "init", method: "initialize", params: initializeParams });
    const answer = await peer.response("init");
    check(answer.result?.protocolVersion === LEGACY, "initialize did not negotiate 2025-11-25", answer);
    await peer.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  });

  for (const c of cases) {
    await step(`stdio: ${c.name} -> ${c.code}`, async () => {
      await peer.write(c.raw + "\n");
      const answer = await peer.take((m) => "error" in m && c.ids.includes(m.id), { what: `the error for ${c.name}` });
      checkError(answer, c);
      await stillServing(c.name);
    });
  }

  await step("stdio: modern-era unknown method -> -32601", async () => {
    await peer.send({ jsonrpc: "2.0", id: "m1", method: "parity/no_such_method", params: { _meta: modernMeta } });
    checkError(await peer.response("m1"), { name: "modern unknown method", code: -32601, ids: ["m1"] });
    await stillServing("a modern unknown method");
  });

  await step(`stdio: a line over the limit (${maxBytes + (1 << 20)} bytes) is refused, then serving resumes`, async () => {
    await peer.write(oversized() + "\n");
    const answer = await peer.take((m) => "error" in m && (m.id === null || m.id === "big"), { what: "the error for the oversized line", timeoutMs: 30_000 });
    check([-32600, -32700].includes(answer.error.code), "oversized line: expected -32600 or -32700", answer);
    await stillServing("the oversized line");
  });

  await step(`stdio: ${floodCount} pipelined requests in one write all answered`, async () => {
    let batch = "";
    for (let i = 0; i < floodCount; i++) {
      const method = i % 2 ? "tools/list" : "ping";
      batch += JSON.stringify({ jsonrpc: "2.0", id: `f${i}`, method }) + "\n";
    }
    await peer.write(batch);
    let busy = 0;
    for (let i = 0; i < floodCount; i++) {
      const answer = await peer.response(`f${i}`, { timeoutMs: 60_000 });
      if (answer.error) {
        check(answer.error.code === BUSY, `flood request f${i} failed with a non-retryable error`, answer);
        busy += 1;
      }
    }
    check(busy < floodCount, "every flooded request was refused as busy");
    check(!peer.messages.some((m) => typeof m.id === "string" && m.id.startsWith("f")), "a flooded request was answered twice");
    console.log(`     ${floodCount - busy} answered, ${busy} refused as busy (retryable)`);
    await stillServing("the flood");
  });

  await step("stdio: stdout carried nothing but JSON-RPC", () => {
    check(peer.violations.length === 0, "non-JSON lines on stdout", peer.violations);
  });

  await step("stdio: the server exits on stdin EOF", async () => {
    peer.child.stdin.end();
    const deadline = Date.now() + 10_000;
    while (!peer.exit && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    check(peer.exit, "still running 10 s after stdin closed");
    check(peer.exit.code === 0, "exit status after EOF is not 0", peer.exit);
  });
}

async function httpSuite() {
  const endpoint = await step("start server", () => resolveTarget(target));
  const url = endpoint.url;
  const base = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  let session = {};
  const post = (body, headers = {}) => httpRequest(url, { headers: { ...base, ...session, ...headers }, body });
  let pings = 0;
  const stillServing = async (after) => {
    const id = `alive-${++pings}`;
    const reply = await post(JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }));
    const answer = reply.messages.find((m) => m.id === id);
    check(reply.status === 200 && answer?.result, `ping after ${after} failed (HTTP ${reply.status})`, reply.body.slice(0, 500));
  };

  await step("initialize (legacy handshake)", async () => {
    const reply = await post(JSON.stringify({ jsonrpc: "2.0", id: "init", method: "initialize", params: initializeParams }));
    const answer = reply.messages.find((m) => m.id === "init");
    check(reply.status === 200 && answer?.result?.protocolVersion === LEGACY, `initialize failed (HTTP ${reply.status})`, reply.body.slice(0, 500));
    session = { "mcp-protocol-version": LEGACY };
    if (reply.headers["mcp-session-id"]) session["mcp-session-id"] = reply.headers["mcp-session-id"];
    const note = await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    check(note.status === 202, `notifications/initialized: expected 202, got ${note.status}`, note.body);
  });

  for (const c of cases) {
    await step(`http: ${c.name} -> ${c.code}`, async () => {
      const reply = await post(c.raw);
      check(reply.status < 500, `HTTP ${reply.status} for a client error`, reply.body.slice(0, 500));
      const answer = reply.messages.find((m) => "error" in m);
      checkError(answer, c);
      if (c.code === -32700 || c.code === -32600) check(reply.status >= 400, `${c.name}: expected HTTP 4xx, got ${reply.status}`);
      await stillServing(c.name);
    });
  }

  await step("http: modern-era unknown method -> 404 and -32601", async () => {
    const reply = await httpRequest(url, {
      headers: { ...base, "mcp-protocol-version": MODERN, "mcp-method": "parity/no_such_method" },
      body: JSON.stringify({ jsonrpc: "2.0", id: "m1", method: "parity/no_such_method", params: { _meta: modernMeta } }),
    });
    check(reply.status === 404, `expected HTTP 404, got ${reply.status}`, reply.body.slice(0, 500));
    checkError(reply.messages[0], { name: "modern unknown method", code: -32601, ids: ["m1"] });
    await stillServing("a modern unknown method");
  });

  await step(`http: a body over the limit (${maxBytes + (1 << 20)} bytes) -> 413, then serving resumes`, async () => {
    const reply = await post(oversized());
    check(reply.status === 413, `expected HTTP 413, got ${reply.status}`, reply.body.slice(0, 500));
    await stillServing("the oversized body");
  });

  await step(`http: ${floodCount} POSTs, ${concurrency} at a time, all answered`, async () => {
    let next = 0;
    let ok = 0;
    let busy = 0;
    const worker = async () => {
      while (next < floodCount) {
        const i = next++;
        const id = `f${i}`;
        const reply = await post(JSON.stringify({ jsonrpc: "2.0", id, method: i % 2 ? "tools/list" : "ping" }));
        const answer = reply.messages.find((m) => m.id === id) ?? reply.messages.find((m) => "error" in m);
        if (reply.status === 200 && answer?.result) { ok += 1; continue; }
        check(answer?.error?.code === BUSY || reply.status === 503 || reply.status === 429,
              `flood request ${id}: neither answered nor refused as busy (HTTP ${reply.status})`, reply.body.slice(0, 500));
        busy += 1;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    check(ok > 0, "every flooded request was refused as busy");
    console.log(`     ${ok} answered, ${busy} refused as busy (retryable)`);
    await stillServing("the flood");
  });
}
