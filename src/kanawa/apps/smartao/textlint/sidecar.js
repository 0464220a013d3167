// SmartAO's warm textlint sidecar: one Node process, JSON lines over stdin/stdout.
// Request:  {"id": 1, "text": "..."}            one line
// Answer:   {"id": 1, "messages": [{"rule": "...", "message": "...", "start": 0, "end": 1,
//            "fix": {"start": 0, "end": 1, "text": "..."} | null, "severity": 2}]}
// Offsets are textlint's: UTF-16 code units. The Python side converts them to characters.
// The first line written is {"ready": true}, after a warm-up lint has loaded every rule's dictionary.
"use strict";
// Usage: node sidecar.js [MODULES_HOME]: the directory whose node_modules hold textlint and its rules
// (default: this script's; a pip install keeps them in the per-user cache, `kanawa smartao setup`).
const path = require("path");
const readline = require("readline");
const { createRequire } = require("module");

const home = path.resolve(process.argv[2] || __dirname);

async function main() {
  const { createLinter, loadTextlintrc } = createRequire(path.join(home, "package.json"))("textlint");
  const descriptor = await loadTextlintrc({
    configFilePath: path.join(__dirname, ".textlintrc.json"),
    node_modulesDir: path.join(home, "node_modules"),
  });
  const linter = createLinter({ descriptor });
  const lint = async (text) => {
    const result = await linter.lintText(text, "essay.txt");
    return result.messages.map((m) => ({
      rule: m.ruleId,
      message: m.message,
      start: m.range[0],
      end: m.range[1],
      fix: m.fix ? { start: m.fix.range[0], end: m.fix.range[1], text: m.fix.text } : null,
      severity: m.severity,
    }));
  };
  await lint("これは準備です。準備である。");
  process.stdout.write(JSON.stringify({ ready: true }) + "\n");
  const lines = readline.createInterface({ input: process.stdin, terminal: false });
  // One request at a time, in order: answers come back in the order asked.
  let chain = Promise.resolve();
  lines.on("line", (line) => {
    chain = chain.then(async () => {
      let id = null;
      try {
        const request = JSON.parse(line);
        id = request.id;
        if (typeof request.text !== "string") throw new Error("text must be a string");
        const messages = await lint(request.text);
        process.stdout.write(JSON.stringify({ id, messages }) + "\n");
      } catch (error) {
        process.stdout.write(JSON.stringify({ id, error: String(error && error.message) }) + "\n");
      }
    });
  });
  lines.on("close", () => chain.then(() => process.exit(0)));
}

main().catch((error) => {
  process.stdout.write(JSON.stringify({ ready: false, error: String(error && error.message) }) + "\n");
  process.exit(1);
});
