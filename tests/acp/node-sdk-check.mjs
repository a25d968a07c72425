// Drives `pith acp` with the official ACP TypeScript SDK (@agentclientprotocol/sdk), against a
// tiny OpenAI-compatible mock served here: initialize → session/new → a prompt that streams →
// a bash call approved through session/request_permission → /compact. Not run by CI.
//
//   npm install @agentclientprotocol/sdk   (in a scratch directory holding this script)
//   PITH=/path/to/pith node node-sdk-check.mjs
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import http from "node:http";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";

const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", created: 0, model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const usage = (p, c) =>
  `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", created: 0, model: "m", choices: [],
    usage: { prompt_tokens: p, completion_tokens: c, total_tokens: p + c } })}\n\n`;
const long = "the quick brown fox jumps over the lazy dog ".repeat(300);
const summary = "## Goal\nSay hello.\n## Constraints & Preferences\nNone\n## Progress\nDone.\n## Key Decisions\nNone\n## Next Steps\nNone\n## Critical Context\nNone\n## Relevant Files\nnode.txt";
const answers = [
  [chunk({ role: "assistant", content: "" }), chunk({ content: "Hello from pith. " }), chunk({ content: long }), chunk({}, "stop"), usage(1000, 2700)],
  [chunk({ role: "assistant", content: null }),
   chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "bash", arguments: "" } }] }),
   chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify({ command: "echo hi > node.txt" }) } }] }),
   chunk({}, "tool_calls"), usage(1100, 10)],
  [chunk({ role: "assistant", content: "" }), chunk({ content: "Wrote node.txt." }), chunk({}, "stop"), usage(1200, 5)],
  [chunk({ role: "assistant", content: "" }), chunk({ content: summary }), chunk({}, "stop"), usage(1300, 100)],
];
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    const frames = answers.shift() ?? [chunk({ content: "?" }), chunk({}, "stop")];
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(frames.join("") + "data: [DONE]\n\n");
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${server.address().port}`;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pith-acp-node-"));
const ws = path.join(tmp, "ws");
fs.mkdirSync(ws);
const config = path.join(tmp, "pith.toml");
fs.writeFileSync(config, `model = "mock/m"\n[provider.mock]\nkind = "openai"\nbase_url = "${url}/v1"\n[models."mock/m"]\ncontext = 24000\noutput = 4000\n`);
const child = spawn(process.env.PITH ?? "pith", ["acp"], {
  cwd: ws,
  env: { ...process.env, PITH_CONFIG: config, PITH_DATA_DIR: path.join(tmp, "data"), HOME: tmp },
  stdio: ["pipe", "pipe", "inherit"],
});
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const seen = [];
const app = acp
  .client({ name: "node-sdk-check" })
  .onNotification(acp.methods.client.session.update, (ctx) => {
    const u = ctx.params.update;
    seen.push(u.sessionUpdate);
    if (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update")
      console.log(`  ${u.sessionUpdate} ${u.toolCallId} ${u.kind ?? ""} ${u.status ?? ""} ${u.title ?? ""}`);
    if (u.sessionUpdate === "usage_update") console.log(`  usage_update used=${u.used} size=${u.size} cost=${u.cost?.amount}`);
  })
  .onRequest(acp.methods.client.session.requestPermission, (ctx) => {
    console.log(`  request_permission: ${ctx.params.toolCall.title} → allow_once`);
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  });

await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  console.log("initialize:", JSON.stringify(init));
  const s = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
  console.log("session/new:", s.sessionId, "modes:", s.modes?.availableModes.map((m) => m.id).join(","));
  for (const text of ["hello", "write node.txt", "/compact"]) {
    const r = await ctx.request(acp.methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text }] });
    console.log(`prompt ${JSON.stringify(text)}: stopReason=${r.stopReason}`);
  }
});
const counts = {};
for (const k of seen) counts[k] = (counts[k] ?? 0) + 1;
console.log("updates:", JSON.stringify(counts));
console.log("node.txt:", JSON.stringify(fs.readFileSync(path.join(ws, "node.txt"), "utf8")));
child.stdin.end();
server.close();
