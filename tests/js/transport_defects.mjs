// The transport defects of issue #17 and the HTTP hardening of #14, each reproduced as the
// issue describes it, over the real transports (raw JSON-RPC where no SDK client sends
// such bytes, the TypeScript SDK where one does):
//   stdio-batch   a 2025-03-26 batch over stdio is answered as ONE array; a tool in a batch
//                 can elicit (the request passes through, the array follows the answer);
//                 a message nesting 100,000 objects is a parse error, never a crash
//   http-batch    the same over HTTP; a batch whose tool elicits and is never answered
//                 does not stop SIGTERM from ending the server
//   eof-busy      45 calls blocked in a tool that ignores cancellation fill the worker
//                 pool; after they are cancelled and stdin closes, the server still exits
//   sessions      legacy sessions nobody DELETEs do not lock new clients out
//                 (--max-sessions 3, five SDK clients: the least recently used one ends)
//   slow-headers  80 connections that never finish their headers do not block a client
//                 (and are closed at the header deadline)
//   tokens        beyond loopback a token is required; a token file readable by others is
//                 refused; a forged Host: 127.0.0.1 gets 401; a session is bound to its token
//
// usage: node transport_defects.mjs --case NAME [--fifo-tool NAME --fifo-arg KEY] <server target>
//   (tokens: the target is the parity binary's `serve` command line without --http)
import "./lib/deps.mjs";
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { check, cleanupAll, onCleanup, parseArgs, startHttpServer, step, stopChild, watchdog } from "./lib/harness.mjs";
import { StdioPeer, httpRequest } from "./lib/raw_rpc.mjs";

watchdog(150);
const { options, target } = parseArgs(process.argv.slice(2));
const which = options.case;
const OLD = "2025-03-26";
const deep = (n) => '{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"x":' + '{"a":'.repeat(n) + "1" + "}".repeat(n) + "}}";

const cases = { "stdio-batch": stdioBatch, "http-batch": httpBatch, "eof-busy": eofBusy, sessions, "slow-headers": slowHeaders, tokens };
if (!cases[which]) { console.error(`unknown --case ${which}; one of ${Object.keys(cases).join(", ")}`); process.exit(2); }
await cases[which]();
await step("stop", () => cleanupAll());
console.log("PASS");
process.exit(0);

async function initializeStdio(peer, version, capabilities = {}) {
  await peer.send({ jsonrpc: "2.0", id: "init", method: "initialize",
                    params: { protocolVersion: version, capabilities, clientInfo: { name: "parity-defects", version: "1" } } });
  const init = await peer.response("init");
  check(init.result?.protocolVersion === version, `initialize did not negotiate ${version}`, init);
  await peer.send({ jsonrpc: "2.0", method: "notifications/initialized" });
}

async function stdioBatch() {
  const peer = new StdioPeer(target.command, target.args);
  await step("initialize 2025-03-26 (declaring elicitation)", () => initializeStdio(peer, OLD, { elicitation: {} }));
  await step("a batch is answered as one JSON array, notifications get nothing", async () => {
    await peer.send([{ jsonrpc: "2.0", id: "b1", method: "ping" },
                     { jsonrpc: "2.0", id: "b2", method: "tools/call", params: { name: "test_simple_text", arguments: {} } },
                     { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "x", progress: 1 } }]);
    const array = await peer.take((m) => Array.isArray(m), { what: "the batch's array" });
    check(array.length === 2, "the array must hold exactly the two replies", array);
    check(array.map((r) => r.id).sort().join() === "b1,b2", "the array must answer b1 and b2", array);
    check(!peer.messages.some((m) => m.id === "b1" || m.id === "b2"), "a reply also came on its own line", peer.messages);
  });
  await step("a tool in a batch elicits; the array follows the answer", async () => {
    await peer.send([{ jsonrpc: "2.0", id: "b3", method: "tools/call",
                       params: { name: "test_elicitation", arguments: { message: "Go on?" } } },
                     { jsonrpc: "2.0", id: "b4", method: "ping" }]);
    const ask = await peer.take((m) => m.method === "elicitation/create", { what: "the elicitation/create request" });
    await peer.send({ jsonrpc: "2.0", id: ask.id, result: { action: "accept", content: { response: "yes" } } });
    const array = await peer.take((m) => Array.isArray(m), { what: "the second batch's array" });
    check(array.map((r) => r.id).sort().join() === "b3,b4", "the array must answer b3 and b4", array);
    const text = array.find((r) => r.id === "b3").result?.content?.[0]?.text ?? "";
    check(text.includes("action=accept"), "the tool did not get the answer", array);
  });
  await step("100,000 nested objects: a parse error, and the server goes on", async () => {
    await peer.write(deep(100_000) + "\n");
    const error = await peer.nullIdError();
    check(error.error.code === -32700, "expected -32700", error);
    await peer.send({ jsonrpc: "2.0", id: "after-deep", method: "ping" });
    check((await peer.response("after-deep")).result, "no answer after the deep message");
  });
}

// A POST read as it streams: SSE events are handed to `onMessage` as they arrive.
async function streamingPost(url, headers, body, onMessage) {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json",
                                 accept: "application/json, text/event-stream", ...headers }, body: JSON.stringify(body) });
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    const text = await res.text();
    await onMessage(text ? JSON.parse(text) : null);
    return res.status;
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return res.status;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = event.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n");
      if (data && (await onMessage(JSON.parse(data))) === "stop") { await reader.cancel(); return res.status; }
    }
  }
}

async function legacySession(url, version, capabilities = {}, headers = {}) {
  const init = await httpRequest(url, { headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize",
                           params: { protocolVersion: version, capabilities, clientInfo: { name: "parity-defects", version: "1" } } }) });
  check(init.status === 200, `initialize: HTTP ${init.status}`, init.body);
  const sid = init.headers["mcp-session-id"];
  check(sid, "no Mcp-Session-Id", init.headers);
  const h = { "mcp-session-id": sid, "mcp-protocol-version": version, ...headers };
  await httpRequest(url, { headers: { "content-type": "application/json", ...h },
                           body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) });
  return h;
}

async function httpBatch() {
  const server = await step("start server", () => startHttpServer(target));
  const h = await step("initialize a 2025-03-26 session (declaring elicitation)", () => legacySession(server.url, OLD, { elicitation: {} }));
  await step("a batch gets one JSON array", async () => {
    const r = await httpRequest(server.url, { headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...h },
      body: JSON.stringify([{ jsonrpc: "2.0", id: "b1", method: "ping" },
                            { jsonrpc: "2.0", id: "b2", method: "tools/call", params: { name: "test_simple_text", arguments: {} } }]) });
    const array = r.messages.find(Array.isArray);
    check(r.status === 200 && array?.length === 2, `expected 200 with a two-reply array, got ${r.status}`, r.body);
  });
  await step("a tool in a batch elicits over the stream; the array follows the answer", async () => {
    let array = null;
    await streamingPost(server.url, h, [{ jsonrpc: "2.0", id: "b3", method: "tools/call",
                                          params: { name: "test_elicitation", arguments: { message: "Go on?" } } },
                                        { jsonrpc: "2.0", id: "b4", method: "ping" }], async (m) => {
      if (m?.method === "elicitation/create") {
        const answer = await httpRequest(server.url, { headers: { "content-type": "application/json", ...h },
          body: JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { action: "accept", content: { response: "yes" } } }) });
        check(answer.status === 202, `the answer got HTTP ${answer.status}`, answer.body);
      } else if (Array.isArray(m)) {
        array = m;
        return "stop";
      }
    });
    check(array?.map((r) => r.id).sort().join() === "b3,b4", "the array must answer b3 and b4", array);
  });
  await step("100,000 nested objects: 400 with a parse error", async () => {
    const r = await httpRequest(server.url, { headers: { "content-type": "application/json", ...h }, body: deep(100_000) });
    check(r.status === 400 && r.messages[0]?.error?.code === -32700, `expected 400 -32700, got ${r.status}`, r.body);
  });
  await step("a batch whose elicitation nobody answers does not stop SIGTERM", async () => {
    const pending = streamingPost(server.url, h, [{ jsonrpc: "2.0", id: "b5", method: "tools/call",
                                                    params: { name: "test_elicitation", arguments: { message: "Anyone?" } } }],
                                  async () => {}).catch(() => "stream ended");
    await new Promise((r) => setTimeout(r, 300));  // the question is out
    const exited = new Promise((r) => server.child.once("exit", (code, signal) => r({ code, signal })));
    server.child.kill("SIGTERM");
    const how = await exited;
    check(how.code === 0, "the server did not end cleanly on SIGTERM", how);
    await pending;
  });
}

async function eofBusy() {
  const dir = mkdtempSync(join(tmpdir(), "parity-fifo-"));
  const fifo = join(dir, "no-writer.log");
  execFileSync("mkfifo", [fifo]);
  const tool = options["fifo-tool"] ?? "test_blocking_read";
  const key = options["fifo-arg"] ?? "path";
  const peer = new StdioPeer(target.command, target.args);
  await step("initialize", () => initializeStdio(peer, "2025-11-25"));
  const ids = [];
  await step(`45 calls of ${tool} on a FIFO nobody writes`, async () => {
    for (let i = 0; i < 45; ++i) {
      const id = `fifo-${i}`;
      ids.push(id);
      const args = key === "paths" ? { paths: [fifo] } : { [key]: fifo };
      await peer.send({ jsonrpc: "2.0", id, method: "tools/call", params: { name: tool, arguments: args } });
    }
    await peer.send({ jsonrpc: "2.0", id: "alive", method: "ping" });
    check((await peer.response("alive")).result, "ping not answered while the pool is full");
  });
  await step("all cancelled, stdin closed: the server exits", async () => {
    for (const id of ids) await peer.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "test" } });
    const exited = new Promise((r) => (peer.exit ? r(peer.exit) : peer.child.once("exit", (code, signal) => r({ code, signal }))));
    peer.child.stdin.end();
    const how = await exited;
    check(how.signal === null, "the server was killed instead of exiting", { how, stderr: peer.stderr.slice(-1500) });
  });
}

async function sessions() {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const server = await step("start server (--max-sessions 3)", () => startHttpServer(target));
  const ids = [];
  await step("five SDK clients connect and go away without DELETE (the issue's leak)", async () => {
    for (let i = 0; i < 5; ++i) {
      const transport = new StreamableHTTPClientTransport(new URL(server.url));
      const client = new Client({ name: `parity-session-${i}`, version: "1" }, { capabilities: {} });
      await client.connect(transport);
      await client.listTools();
      ids.push(transport.sessionId);
      await client.close();  // closes its streams; sends no DELETE
    }
  });
  const ping = (sid) => httpRequest(server.url, { headers: { "content-type": "application/json", accept: "application/json, text/event-stream",
                                                             "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" },
                                                  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) });
  await step("the least recently used sessions ended (404), the newest three still answer", async () => {
    for (const [i, sid] of ids.entries()) {
      const r = await ping(sid);
      check(r.status === (i < 2 ? 404 : 200), `session ${i}: HTTP ${r.status}`, r.body);
    }
  });
}

async function slowHeaders() {
  const server = await step("start server", () => startHttpServer(target));
  const sockets = [];
  const closed = [];
  await step("80 connections that trickle their headers and never finish", async () => {
    for (let i = 0; i < 80; ++i) {
      const socket = connect({ host: "127.0.0.1", port: server.port });
      await new Promise((r, j) => { socket.once("connect", r); socket.once("error", j); });
      socket.write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
      socket.on("error", () => {});
      closed.push(new Promise((r) => socket.once("close", r)));
      sockets.push(socket);
    }
    const trickle = setInterval(() => { for (const s of sockets) if (!s.destroyed) s.write("a"); }, 300);
    onCleanup(() => clearInterval(trickle));
  });
  await step("meanwhile an SDK client connects, lists and calls", async () => {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    const client = new Client({ name: "parity-beside-slow", version: "1" }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    const tools = await client.listTools();
    check(tools.tools.length > 0, "no tools listed", tools);
    check(sockets.filter((s) => !s.destroyed).length === 80, "the slow connections were closed before the client ran (not what this tests)");
    await client.close();
  });
  await step("the server closes the slow connections at their header deadline", async () => {
    await Promise.all(closed);
  });
}

async function tokens() {
  const [command, ...args] = [target.command, ...target.args];
  const dir = mkdtempSync(join(tmpdir(), "parity-tokens-"));
  const run = (extra, opts = {}) => new Promise((resolve) => {
    const child = spawn(command, [...args, ...extra], { stdio: ["ignore", "ignore", "pipe"], ...opts });
    let err = "";
    child.stderr.on("data", (c) => { err += c; });
    child.once("exit", (code) => resolve({ code, err }));
  });
  await step("--http 0.0.0.0 without a token is refused", async () => {
    const r = await run(["--http", "0.0.0.0:0"]);
    check(r.code === 2 && r.err.includes("--token-file"), "expected exit 2 naming --token-file", r);
  });
  const tokenA = "tokenA-" + "a".repeat(32), tokenB = "tokenB-" + "b".repeat(32);
  const file = join(dir, "tokens");
  writeFileSync(file, `# two clients\n${tokenA}\n${tokenB}\n`);
  chmodSync(file, 0o644);
  await step("a token file readable by others is refused", async () => {
    const r = await run(["--http", "127.0.0.1:0", "--token-file", file]);
    check(r.code === 2 && r.err.includes("chmod 600"), "expected exit 2 with the chmod hint", r);
  });
  chmodSync(file, 0o600);
  const server = await step("serving on 0.0.0.0 with the token file", () =>
    startHttpServer({ command, args: [...args, "--http", "0.0.0.0:{port}", "--token-file", file], env: {} }));
  const url = server.url;
  await step("a forged Host: 127.0.0.1 without the token gets 401", async () => {
    const r = await httpRequest(url, { headers: { host: "127.0.0.1", "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {} } }) });
    check(r.status === 401, `expected 401, got ${r.status}`, r.body);
  });
  await step("a session opened with one token is unknown to the other", async () => {
    const h = await legacySession(url, "2025-11-25", {}, { authorization: `Bearer ${tokenA}` });
    const ping = (auth) => httpRequest(url, { headers: { "content-type": "application/json", accept: "application/json, text/event-stream",
                                                       ...h, authorization: `Bearer ${auth}` },
                                              body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }) });
    check((await ping(tokenB)).status === 404, "token B reached token A's session");
    check((await ping(tokenA)).status === 200, "token A lost its own session");
  });
}
