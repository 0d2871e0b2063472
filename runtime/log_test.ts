import assert from "node:assert/strict";
import { addLogFilter, log } from "./log.ts";
import { processRedactor, REDACTED, secretForms } from "./redact/mod.ts";

/** The lines `fn` logs. */
function logged(fn: () => void): string[] {
  const lines: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void lines.push(args.map(String).join(" "));
  try {
    fn();
  } finally {
    console.error = original;
  }
  return lines;
}

Deno.test("log() passes every line through the process redactor", () => {
  const secret = `log-${crypto.randomUUID()} "pw"`;
  const forms = secretForms(secret);
  const before = logged(() => log(`before: ${forms[0]}`));
  assert.equal(before[0], `omotai: before: ${forms[0]}`);
  processRedactor().add([secret]);
  const lines = logged(() => {
    for (const f of forms) log(`failed near ${f} (code X)`);
  });
  assert.equal(lines.length, forms.length);
  for (const line of lines) {
    assert.equal(line, `omotai: failed near ${REDACTED} (code X)`);
    assert.deepEqual(forms.filter((f) => line.includes(f)), []);
  }
});

Deno.test("addLogFilter() adds to the filters and takes none away", () => {
  const secret = `filter-${crypto.randomUUID()}`;
  processRedactor().add([secret]);
  addLogFilter((line) => line.replace("MARK", "mark"));
  const [line] = logged(() => log(`MARK ${btoa(secret)}`));
  assert.equal(line, `omotai: mark ${REDACTED}`);
});
