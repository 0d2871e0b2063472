import assert from "node:assert/strict";

Deno.test("installLastResort() keeps the process alive past a stray throw and rejection, naming neither message", async () => {
  const script = `
    import { installLastResort } from ${
    JSON.stringify(new URL("./last_resort.ts", import.meta.url).href)
  };
    installLastResort();
    Promise.reject(new Error("page text planted-9f3"));
    setTimeout(() => { throw new TypeError("planted-9f3 again"); }, 10);
    setTimeout(() => console.log("still alive"), 150);
  `;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--no-lock", "-"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = out.stdin.getWriter();
  await w.write(new TextEncoder().encode(script));
  await w.close();
  const { code, stdout, stderr } = await out.output();
  const text = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  assert.equal(code, 0, text);
  assert.match(text, /still alive/);
  assert.match(text, /UNHANDLED_REJECTION: Error/);
  assert.match(text, /UNCAUGHT_ERROR: TypeError/);
  assert.doesNotMatch(text, /planted-9f3/);
});
