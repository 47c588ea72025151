// The official TypeScript SDK v1 client (@modelcontextprotocol/sdk 1.32.x, 2025-11-25
// handshake era) against an MCP server over stdio or Streamable HTTP. Asserts real
// outcomes: the handshake, tools/list followed through every page, optional tool calls
// (plain, with a progress handler, with an elicitation handler answering the question),
// and an unknown tool answered as an error that names it.
//
// usage: node sdk1_client.mjs [options] <server target (see lib/harness.mjs)>
//   options: see lib/client_steps.mjs (expected tools, a call, progress, elicitation)
import "./lib/deps.mjs";
import { check, onCleanup, parseArgs, resolveTarget, step, watchdog, cleanupAll } from "./lib/harness.mjs";
import { answerFor } from "./lib/mcp_checks.mjs";
import { runToolSteps } from "./lib/client_steps.mjs";

const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { ElicitRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");

watchdog(90);
const { options, target } = parseArgs(process.argv.slice(2));

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

await runToolSteps({ client, options, elicitations,
                    call: (params, requestOptions) => client.callTool(params, undefined, requestOptions) });

await step("close", () => cleanupAll());
console.log("PASS");
process.exit(0);
