// The official TypeScript SDK v1 client (@modelcontextprotocol/sdk 1.32.x, 2025-11-25
// handshake era) against an MCP server over stdio or Streamable HTTP. Asserts real
// outcomes: the handshake, tools/list followed through every page, optional tool calls
// (plain, with a progress handler, with an elicitation handler answering the question),
// and an unknown tool answered as an error that names it.
//
// usage: node sdk1_client.mjs [options] <server target (see lib/harness.mjs)>
//   --expect-tools a,b          names tools/list must include
//   --tools-cli '["parity","tools"]'  argv whose JSON output lists the same tools
//   --call NAME [--call-args JSON] [--call-expect TEXT]   a call that must succeed
//   --progress-tool NAME [--progress-args JSON]  must send >= 2 increasing progress values
//   --elicit-tool NAME [--elicit-args JSON] [--elicit-expect TEXT]  must ask us once
import "./lib/deps.mjs";
import { check, onCleanup, parseArgs, resolveTarget, step, watchdog, cleanupAll } from "./lib/harness.mjs";
import { toolNamesFromCli, answerFor, resultText } from "./lib/mcp_checks.mjs";

const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { ElicitRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");

watchdog(90);
const { options, target } = parseArgs(process.argv.slice(2));
const json = (s, fallback) => (s === undefined ? fallback : JSON.parse(s));

const client = new Client({ name: "parity-test-sdk1", version: "1.0.0" },
                          { capabilities: { elicitation: { form: {} } } });
const elicitations = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  elicitations.push(request.params);
  return { action: "accept", content: answerFor(request.params.requestedSchema) };
});

const endpoint = await step("start server", () => resolveTarget(target));
const transport = endpoint.stdio
  ? new StdioClientTransport({ ...endpoint.stdio, stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(endpoint.url));

await step("initialize (2025-11-25 handshake)", async () => {
  await client.connect(transport);
  onCleanup(() => client.close());
  const info = client.getServerVersion();
  check(info?.name && info?.version, "serverInfo lacks name/version", info);
  check(client.getServerCapabilities()?.tools, "server did not declare the tools capability",
        client.getServerCapabilities());
  console.log(`     server ${info.name} ${info.version}`);
});

const tools = await step("tools/list, every page", async () => {
  const all = [];
  let cursor;
  let pages = 0;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    pages += 1;
    check(Array.isArray(page.tools), "tools/list result has no tools array", page);
    all.push(...page.tools);
    cursor = page.nextCursor;
    check(pages <= 1000, "tools/list keeps returning a nextCursor");
  } while (cursor);
  const names = all.map((t) => t.name);
  check(new Set(names).size === names.length, "a tool appears twice across pages", names);
  for (const tool of all) {
    check(typeof tool.description === "string" && tool.description.length > 0, `tool ${tool.name} has no description`);
    check(tool.inputSchema?.type === "object", `tool ${tool.name} inputSchema is not an object schema`, tool.inputSchema);
  }
  console.log(`     ${all.length} tools in ${pages} page(s)`);
  return all;
});
const names = new Set(tools.map((t) => t.name));

if (options["expect-tools"]) {
  await step("tools/list includes the expected tools", () => {
    for (const name of options["expect-tools"].split(",")) check(names.has(name), `missing tool ${name}`, [...names]);
  });
}

if (options["tools-cli"]) {
  await step("tools/list matches the CLI's tool list", () => {
    const fromCli = toolNamesFromCli(json(options["tools-cli"]));
    check(JSON.stringify([...fromCli].sort()) === JSON.stringify([...names].sort()),
          "MCP tools/list and the CLI list different tools", { mcp: [...names], cli: [...fromCli] });
  });
}

if (options.call) {
  await step(`tools/call ${options.call}`, async () => {
    const result = await client.callTool({ name: options.call, arguments: json(options["call-args"], {}) });
    check(!result.isError, "tool returned isError", result);
    const text = resultText(result);
    if (options["call-expect"]) check(text.includes(options["call-expect"]), `result lacks "${options["call-expect"]}"`, result);
  });
}

if (options["progress-tool"]) {
  await step(`tools/call ${options["progress-tool"]} with a progress handler`, async () => {
    const seen = [];
    const result = await client.callTool(
      { name: options["progress-tool"], arguments: json(options["progress-args"], {}) }, undefined,
      { onprogress: (p) => seen.push(p), resetTimeoutOnProgress: true, timeout: 60_000 });
    check(!result.isError, "tool returned isError", result);
    check(seen.length >= 2, `expected at least 2 progress notifications, got ${seen.length}`, seen);
    for (let i = 1; i < seen.length; i++) {
      check(seen[i].progress > seen[i - 1].progress, "progress did not increase", seen);
    }
    for (const p of seen) {
      if (p.total !== undefined) check(p.progress <= p.total, "progress exceeds total", p);
    }
    console.log(`     progress: ${seen.map((p) => `${p.progress}/${p.total ?? "?"}`).join(" ")}`);
  });
}

if (options["elicit-tool"]) {
  await step(`tools/call ${options["elicit-tool"]} answering its elicitation`, async () => {
    const before = elicitations.length;
    const result = await client.callTool({ name: options["elicit-tool"], arguments: json(options["elicit-args"], {}) });
    check(elicitations.length === before + 1, `expected one elicitation/create, got ${elicitations.length - before}`);
    const asked = elicitations.at(-1);
    check(typeof asked.message === "string" && asked.message.length > 0, "elicitation has no message", asked);
    check(asked.requestedSchema?.type === "object", "requestedSchema is not an object schema", asked);
    check(!result.isError, "tool returned isError after an accepted elicitation", result);
    const text = resultText(result);
    if (options["elicit-expect"]) check(text.includes(options["elicit-expect"]), `result lacks "${options["elicit-expect"]}"`, result);
    console.log(`     asked: ${asked.message.slice(0, 80)}`);
  });
}

await step("tools/call of an unknown tool is an error naming it", async () => {
  const name = "parity_no_such_tool";
  let message;
  try {
    const result = await client.callTool({ name, arguments: {} });
    check(result.isError === true, "an unknown tool returned a successful result", result);
    message = resultText(result);
  } catch (error) {
    message = error.message;  // a JSON-RPC error (-32602) is also what the spec allows
  }
  check(message.includes(name), "the error does not name the unknown tool", message);
});

await step("close", () => cleanupAll());
console.log("PASS");
process.exit(0);
