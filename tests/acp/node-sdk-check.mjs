// Drives `pith acp` with the official ACP TypeScript SDK (@agentclientprotocol/sdk), against a
// tiny OpenAI-compatible mock served here: initialize (offering fs and terminals) → session/new
// → a prompt that streams → a bash call approved through session/request_permission (run by
// pith, never in a client terminal) → a read of an unsaved buffer through fs/read_text_file and
// an edit written through fs/write_text_file (the disk untouched) → /compact. Not run by CI;
// exits 1 when a check fails.
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
const call = (id, name, args) =>
  [chunk({ role: "assistant", content: null }),
   chunk({ tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: "" } }] }),
   chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(args) } }] }),
   chunk({}, "tool_calls"), usage(1100, 10)];
const long = "the quick brown fox jumps over the lazy dog ".repeat(300);
const summary = "## Goal\nSay hello.\n## Constraints & Preferences\nNone\n## Progress\nDone.\n## Key Decisions\nNone\n## Next Steps\nNone\n## Critical Context\nNone\n## Relevant Files\nnode.txt";
const answers = [
  [chunk({ role: "assistant", content: "" }), chunk({ content: "Hello from pith. " }), chunk({ content: long }), chunk({}, "stop"), usage(1000, 2700)],
  [chunk({ role: "assistant", content: null }),
   chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "bash", arguments: "" } }] }),
   chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify({ command: "echo hi > node.txt" }) } }] }),
   chunk({}, "tool_calls"), usage(1100, 10)],
  [chunk({ role: "assistant", content: "" }), chunk({ content: "Wrote node.txt." }), chunk({}, "stop"), usage(1200, 5)],
  call("call_r", "read", { file_path: "buffer.txt" }),
  call("call_e", "edit", { file_path: "buffer.txt", old_string: "unsaved line", new_string: "edited line" }),
  [chunk({ role: "assistant", content: "" }), chunk({ content: "Edited buffer.txt." }), chunk({}, "stop"), usage(1200, 5)],
  [chunk({ role: "assistant", content: "" }), chunk({ content: summary }), chunk({}, "stop"), usage(1300, 100)],
];
const bodies = [];
const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    bodies.push(body);
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
const bufferPath = path.join(fs.realpathSync(ws), "buffer.txt");
fs.writeFileSync(bufferPath, "saved line\n");
// the editor's open buffers: what it has that the disk does not
const buffers = new Map([[bufferPath, "saved line\nunsaved line\n"]]);
const fsCalls = [];
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); console.log(`${ok ? "ok" : "FAILED"}: ${what}`); };
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
  })
  .onRequest(acp.methods.client.fs.readTextFile, (ctx) => {
    fsCalls.push(["read", ctx.params.path]);
    console.log(`  fs/read_text_file ${ctx.params.path}`);
    if (!buffers.has(ctx.params.path)) throw new Error(`no buffer for ${ctx.params.path}`);
    return { content: buffers.get(ctx.params.path) };
  })
  .onRequest(acp.methods.client.fs.writeTextFile, (ctx) => {
    fsCalls.push(["write", ctx.params.path, ctx.params.content]);
    console.log(`  fs/write_text_file ${ctx.params.path} ${JSON.stringify(ctx.params.content)}`);
    buffers.set(ctx.params.path, ctx.params.content);
    return {};
  })
  .onRequest(acp.methods.client.terminal.create, (ctx) => {
    fsCalls.push(["terminal", ctx.params.command]);
    throw new Error("this check runs no terminals");
  });

await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true } });
  console.log("initialize:", JSON.stringify(init));
  const s = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
  console.log("session/new:", s.sessionId, "modes:", s.modes?.availableModes.map((m) => m.id).join(","));
  for (const text of ["hello", "write node.txt", "edit buffer.txt", "/compact"]) {
    const r = await ctx.request(acp.methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text }] });
    console.log(`prompt ${JSON.stringify(text)}: stopReason=${r.stopReason}`);
  }
});
const counts = {};
for (const k of seen) counts[k] = (counts[k] ?? 0) + 1;
console.log("updates:", JSON.stringify(counts));
console.log("node.txt:", JSON.stringify(fs.readFileSync(path.join(ws, "node.txt"), "utf8")));
check(fs.readFileSync(path.join(ws, "node.txt"), "utf8") === "hi\n", "bash ran in pith and wrote node.txt");
check(!fsCalls.some(([k]) => k === "terminal"), "no terminal/create");
const afterRead = bodies.find((b) => b.includes("call_r") && b.includes('"role":"tool"')) ?? "";
check(afterRead.includes("unsaved line"), "the model read the unsaved buffer");
const writes = fsCalls.filter(([k]) => k === "write");
check(writes.length === 1 && writes[0][1] === bufferPath && writes[0][2] === "saved line\nedited line\n",
  "the edit was written through fs/write_text_file");
check(fs.readFileSync(bufferPath, "utf8") === "saved line\n", "buffer.txt on disk untouched");
child.stdin.end();
server.close();
process.exitCode = failures.length ? 1 : 0;
