import assert from "node:assert/strict";
import { Teardown } from "./teardown.ts";

/** Runs `fn` with console.error recorded (the teardown logs through `log()`). */
async function logged(fn: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => lines.push(args.join(" "));
  try {
    await fn();
  } finally {
    console.error = original;
  }
  return lines;
}

Deno.test("Teardown runs its steps last-registered first, each once", async () => {
  const ran: string[] = [];
  const t = new Teardown();
  for (const name of ["database", "proxy", "profiles"]) t.defer(name, () => ran.push(name));
  assert.deepEqual(t.pending, ["profiles", "proxy", "database"]);
  await Promise.all([t.run(), t[Symbol.asyncDispose](), t.run()]);
  assert.deepEqual(ran, ["profiles", "proxy", "database"]);
  await t.run();
  assert.deepEqual(ran, ["profiles", "proxy", "database"]);
});

Deno.test("Teardown logs a failing or throwing step by name and runs the rest", async () => {
  const ran: string[] = [];
  const t = new Teardown();
  t.defer("first", () => ran.push("first"));
  t.defer("rejects", () => Promise.reject(new TypeError("page text planted-4c1")));
  t.defer("throws", () => {
    throw new RangeError("planted-4c1");
  });
  const lines = await logged(() => t.run());
  assert.deepEqual(ran, ["first"]);
  assert.deepEqual(lines, [
    "omotai: shutdown: throws: RangeError",
    "omotai: shutdown: rejects: TypeError",
  ]);
});

Deno.test("Teardown bounds each step: one that hangs is left behind, the next still runs", async () => {
  const ran: string[] = [];
  const t = new Teardown();
  t.defer("after", () => ran.push("after"));
  t.defer("hangs", () => new Promise(() => {}), 30);
  const lines = await logged(() => t.run());
  assert.deepEqual(ran, ["after"]);
  assert.deepEqual(lines, ["omotai: shutdown: hangs: not done within 30 ms"]);
});

Deno.test("Teardown runs a step registered during its run too", async () => {
  const ran: string[] = [];
  const t = new Teardown();
  t.defer("makes one late", () => t.defer("late", () => ran.push("late")));
  await t.run();
  assert.deepEqual(ran, ["late"]);
});

Deno.test("Teardown's onDefer sees each name and may fail the registration after it is kept", async () => {
  const seen: string[] = [];
  const ran: string[] = [];
  const t = new Teardown({
    onDefer: (name) => {
      seen.push(name);
      if (name === "b") throw new Error("injected");
    },
  });
  t.defer("a", () => ran.push("a"));
  assert.throws(() => t.defer("b", () => ran.push("b")), /injected/);
  await t.run();
  assert.deepEqual(seen, ["a", "b"]);
  assert.deepEqual(ran, ["b", "a"]);
});
