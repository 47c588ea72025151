// Shared plumbing for the client test scripts: named steps that stop at the first
// failure, a watchdog so a hung server fails the test instead of stalling ctest, and the
// command-line form every script takes for its server:
//   stdio -- CMD [ARGS...]                    spawn CMD, speak MCP on its stdin/stdout
//   http URL                                  an already running Streamable HTTP server
//   spawn-http [--env K=V]... -- CMD [ARGS...] spawn CMD as an HTTP server on a free
//                                             loopback port; "{port}" in ARGS and in the
//                                             --env values is replaced by that port.
import { spawn } from "node:child_process";
import { createServer, connect } from "node:net";

let currentStep = "(start)";

export async function step(name, body) {
  currentStep = name;
  const started = performance.now();
  try {
    const value = await body();
    console.log(`ok   ${name} (${Math.round(performance.now() - started)} ms)`);
    return value;
  } catch (error) {
    console.log(`FAIL ${name}: ${error?.stack ?? error}`);
    await cleanupAll();
    process.exit(1);
  }
}

export function check(condition, message, evidence) {
  if (condition) return;
  const detail = evidence === undefined ? "" : `\n  evidence: ${JSON.stringify(evidence).slice(0, 2000)}`;
  throw new Error(message + detail);
}

// Fails the run if it has not finished after `seconds`, naming the step that hung.
export function watchdog(seconds) {
  const timer = setTimeout(async () => {
    console.log(`FAIL timeout after ${seconds} s in step: ${currentStep}`);
    await cleanupAll();
    process.exit(1);
  }, seconds * 1000);
  timer.unref();
}

const cleanups = [];
export function onCleanup(fn) { cleanups.push(fn); }
export async function cleanupAll() {
  while (cleanups.length) {
    try { await cleanups.pop()(); } catch { /* best effort while failing */ }
  }
}

// Splits argv into "--name value" options (repeatable ones collected into arrays) and
// the server target described in the header comment.
export function parseArgs(argv, { repeatable = [] } = {}) {
  const options = {};
  let i = 0;
  while (i < argv.length && argv[i].startsWith("--")) {
    const name = argv[i].slice(2);
    const value = argv[i + 1];
    if (value === undefined) usage(`option --${name} needs a value`);
    if (repeatable.includes(name)) (options[name] ??= []).push(value);
    else options[name] = value;
    i += 2;
  }
  return { options, target: parseTarget(argv.slice(i)) };
}

function parseTarget(args) {
  const [kind, ...rest] = args;
  if (kind === "http" && rest.length === 1) return { kind, url: rest[0] };
  const dash = rest.indexOf("--");
  if (dash < 0 || dash === rest.length - 1) usage(`expected a server target, got: ${args.join(" ")}`);
  const command = rest.slice(dash + 1);
  if (kind === "stdio") return { kind, command: command[0], args: command.slice(1) };
  if (kind === "spawn-http") {
    const env = {};
    for (let i = 0; i < dash; i += 2) {
      if (rest[i] !== "--env" || !rest[i + 1]?.includes("=")) usage(`bad spawn-http option ${rest[i]}`);
      const [key, ...value] = rest[i + 1].split("=");
      env[key] = value.join("=");
    }
    return { kind, command: command[0], args: command.slice(1), env };
  }
  usage(`unknown server target kind '${kind}'`);
}

export function usage(message) {
  console.error(`usage error: ${message}`);
  console.error("server target: stdio -- CMD [ARGS...] | http URL | " +
                "spawn-http [--env K=V]... -- CMD [ARGS...] (\"{port}\" is substituted)");
  process.exit(2);
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function tcpReady(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => { socket.destroy(); resolve(true); });
    socket.once("error", () => resolve(false));
  });
}

// Starts an HTTP server process (target kind spawn-http) and waits until its port
// accepts connections. Returns { url, port, child }; the process is killed at cleanup.
export async function startHttpServer(target, { path = "/mcp", readySeconds = 20 } = {}) {
  const port = await freePort();
  const fill = (s) => s.replaceAll("{port}", String(port));
  const env = { ...process.env };
  for (const [k, v] of Object.entries(target.env ?? {})) env[k] = fill(v);
  const child = spawn(target.command, target.args.map(fill), { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk) => { output = (output + chunk).slice(-4000); };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  let exited = null;
  child.once("exit", (code, signal) => { exited = { code, signal }; });
  onCleanup(() => stopChild(child));
  const deadline = Date.now() + readySeconds * 1000;
  while (!(await tcpReady(port))) {
    if (exited) throw new Error(`HTTP server exited before listening (${JSON.stringify(exited)}): ${output}`);
    if (Date.now() > deadline) throw new Error(`HTTP server not listening on ${port} after ${readySeconds} s: ${output}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return { url: `http://127.0.0.1:${port}${path}`, port, child, output: () => output };
}

export async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
  await gone;
  clearTimeout(timer);
}

// Resolves the target to what an SDK transport needs: {stdio: {command, args}} or {url}.
export async function resolveTarget(target) {
  if (target.kind === "stdio") return { stdio: { command: target.command, args: target.args } };
  if (target.kind === "http") return { url: target.url };
  const server = await startHttpServer(target);
  return { url: server.url, server };
}
