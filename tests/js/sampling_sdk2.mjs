// inject_prints' MCP-sampling analyser through the official TypeScript SDK v2 client
// (@modelcontextprotocol/client 2.4.x) negotiating the 2026-07-28 era: there the question
// is an input_required result (MRTR) whose sampling/createMessage input requests the client
// fulfils with lib/sampling_steps.mjs's stand-in model before retrying the call.
//
// usage: node sampling_sdk2.mjs <server target (see lib/harness.mjs)>
import "./lib/deps.mjs";
import { check, cleanupAll, onCleanup, parseArgs, step, watchdog } from "./lib/harness.mjs";
import { openSamplingTransport, runSamplingSteps, StandInModel } from "./lib/sampling_steps.mjs";

const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");

watchdog(180);
const { target } = parseArgs(process.argv.slice(2));
// With a key in the environment analyser=auto would try DeepSeek first (and the network).
delete process.env.DEEPSEEK_API_KEY;

// Registered before anything is created: a client refusing the handler leaves nothing behind.
const model = new StandInModel();
const client = new Client({ name: "parity-test-sampling-sdk2", version: "1.0.0" },
                          { capabilities: { sampling: {} }, versionNegotiation: { mode: "auto" } });
client.setRequestHandler("sampling/createMessage", async (request) => model.answer(request.params));

const { fixture, endpoint, transport, toolCalls } =
  await openSamplingTransport({ target, StdioClientTransport, StreamableHTTPClientTransport });

await step("connect in auto mode negotiates 2026-07-28, declaring sampling", async () => {
  await client.connect(transport);
  onCleanup(() => client.close());
  const negotiated = client.getNegotiatedProtocolVersion();
  check(negotiated === "2026-07-28", `negotiated ${negotiated}, expected 2026-07-28`, client.getServerVersion());
});

await runSamplingSteps({ model, fixture, toolCalls, server: endpoint.server, rounds: 2,
                         call: (params) => client.callTool(params, { timeout: 120_000 }) });

await step("close", () => cleanupAll());
console.log("PASS");
process.exit(0);
