// Raw JSON-RPC over the two real transports, for tests that must send bytes no SDK
// client would: a stdio child process written to directly, and HTTP requests built by
// hand (node:http, so a server that answers early and closes is still seen).
import { spawn } from "node:child_process";
import { request } from "node:http";
import { onCleanup, stopChild } from "./harness.mjs";

// A server process spoken to line by line. Every stdout line must be one JSON message
// (MCP stdio framing); anything else is recorded as a framing violation.
export class StdioPeer {
  constructor(command, args) {
    this.child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
    this.messages = [];
    this.violations = [];
    this.stderr = "";
    this.waiters = [];
    this.exit = null;
    let pending = "";
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (chunk) => {
      pending += chunk;
      let nl;
      while ((nl = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (line.trim() === "") continue;
        try {
          this.messages.push(JSON.parse(line));
        } catch {
          this.violations.push(line.slice(0, 300));
        }
      }
      this.wake();
    });
    this.child.stderr.on("data", (chunk) => { this.stderr = (this.stderr + chunk).slice(-8000); });
    this.child.stdin.on("error", () => {});  // EPIPE after the server died: seen via exit
    this.child.once("exit", (code, signal) => { this.exit = { code, signal }; this.wake(); });
    onCleanup(() => stopChild(this.child));
  }

  write(text) {
    return new Promise((resolve) => this.child.stdin.write(text, () => resolve()));
  }
  send(message) { return this.write(JSON.stringify(message) + "\n"); }

  wake() {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  // Waits for (and consumes) the first message satisfying `predicate`.
  async take(predicate, { timeoutMs = 15_000, what = "a message" } = {}) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.messages.findIndex(predicate);
      if (index >= 0) return this.messages.splice(index, 1)[0];
      if (this.exit) throw new Error(`server exited (${JSON.stringify(this.exit)}) while waiting for ${what}; stderr: ${this.stderr.slice(-1500)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${what} within ${timeoutMs} ms; unmatched: ${JSON.stringify(this.messages).slice(0, 1500)}`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => { clearTimeout(timer); resolve(); });
      });
    }
  }

  response(id, options) {
    return this.take((m) => m.id === id && ("result" in m || "error" in m), { what: `the response to id ${JSON.stringify(id)}`, ...options });
  }
  nullIdError(options) {
    return this.take((m) => m.id === null && "error" in m, { what: "an error response with id null", ...options });
  }
}

// One HTTP request; resolves {status, headers, body, messages} where messages are the
// JSON-RPC messages in a JSON or SSE body. A connection reset after the response
// started (a server refusing a body it will not read) is not an error.
export function httpRequest(url, { method = "POST", headers = {}, body = "", timeoutMs = 15_000, agent } = {}) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent, headers: { "content-length": Buffer.byteLength(body), ...headers }, timeout: timeoutMs });
    let settled = false;
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => { text += c; });
      const done = () => {
        if (settled) return;
        settled = true;
        resolve({ status: res.statusCode, headers: res.headers, body: text, messages: messagesIn(res.headers, text) });
      };
      res.on("end", done);
      res.on("aborted", done);
      res.on("error", done);
    });
    req.on("timeout", () => req.destroy(new Error(`HTTP ${method} ${url}: no response within ${timeoutMs} ms`)));
    req.on("error", (error) => { if (!settled) { settled = true; reject(error); } });
    req.end(body);
  });
}

function messagesIn(headers, text) {
  if (!text) return [];
  if ((headers["content-type"] ?? "").includes("text/event-stream")) {
    const out = [];
    for (const event of text.split(/\r?\n\r?\n/)) {
      const data = event.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
      if (data) { try { out.push(JSON.parse(data)); } catch { /* priming events carry no JSON */ } }
    }
    return out;
  }
  try { return [JSON.parse(text)]; } catch { return []; }
}
