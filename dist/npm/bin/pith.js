#!/usr/bin/env node
// The `pith` command of the npm package pith-agent: runs the prebuilt binary of the platform
// package npm installed beside it (an optional dependency per platform, as Codex does), with
// PITH_INSTALL_KIND=npm so that `pith update` and `pith --version` know how pith came.
"use strict";
const { spawn } = require("node:child_process");
const path = require("node:path");

const PLATFORMS = {
  "linux x64": "pith-agent-linux-x64",
  "linux arm64": "pith-agent-linux-arm64",
  "darwin x64": "pith-agent-darwin-x64",
  "darwin arm64": "pith-agent-darwin-arm64",
};

const key = `${process.platform} ${process.arch}`;
const pkg = PLATFORMS[key];
if (!pkg) {
  console.error(`pith: error: no prebuilt pith for ${key}; build it from source: cargo install --locked --git https://github.com/pith-dev/pith`);
  process.exit(1);
}
let binary;
try {
  binary = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "bin", "pith");
} catch {
  console.error(`pith: error: the package ${pkg} is missing (npm skipped the optional dependency); reinstall with: npm install -g pith-agent`);
  process.exit(1);
}
const child = spawn(binary, process.argv.slice(2), {
  stdio: "inherit",
  env: { ...process.env, PITH_INSTALL_KIND: "npm" },
});
// Ctrl-C reaches pith itself (same process group): node only must not die of it. A signal sent
// to node alone is passed on.
process.on("SIGINT", () => {});
for (const signal of ["SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => {
  console.error(`pith: error: cannot run ${binary}: ${error.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
