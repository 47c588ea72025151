// inject_prints' MCP-sampling analyser through the official TypeScript SDK v1 client
// (@modelcontextprotocol/sdk 1.32.x, 2025-11-25 handshake era): the server asks the
// client's model with a sampling/createMessage request on the live connection (over HTTP,
// on the tools/call POST's SSE stream), answered by lib/sampling_steps.mjs's stand-in model.
//
// usage: node sampling_sdk1.mjs <server target (see lib/harness.mjs)>
import "./lib/deps.mjs";
import { check, cleanupAll, onCleanup, parseArgs, step, watchdog } from "./lib/harness.mjs";
import { openSamplingTransport, runSamplingSteps, StandInModel } from "./lib/sampling_steps.mjs";

const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { CreateMessageRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");

watchdog(180);
const { target } = parseArgs(process.argv.slice(2));
// With a key in the environment analyser=auto would try DeepSeek first (and the network).
delete process.env.DEEPSEEK_API_KEY;

// Registered before anything is created: a client refusing the handler leaves nothing behind.
const model = new StandInModel();
const client = new Client({ name: "parity-test-sampling-sdk1", version: "1.0.0" }, { capabilities: { sampling: {} } });
client.setRequestHandler(CreateMessageRequestSchema, async (request) => model.answer(request.params));

const { fixture, endpoint, transport, toolCalls } =
  await openSamplingTransport({ target, StdioClientTransport, StreamableHTTPClientTransport });

await step("initialize (2025-11-25 handshake) declaring sampling", async () => {
  await client.connect(transport);
  onCleanup(() => client.close());
  check(client.getServerCapabilities()?.tools, "server did not declare tools", client.getServerCapabilities());
});

await runSamplingSteps({ model, fixture, toolCalls, server: endpoint.server, rounds: 1,
                         call: (params) => client.callTool(params, undefined, { timeout: 120_000 }) });

await step("close", () => cleanupAll());
console.log("PASS");
process.exit(0);
