import assert from "node:assert/strict";

async function omotai(...args: string[]): Promise<{ code: number; out: string }> {
  const res = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "runtime/main.ts", ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: res.code, out: dec.decode(res.stdout) + dec.decode(res.stderr) };
}

Deno.test("omotai policy keygen, sign, verify and test work end to end for an author", async () => {
  const dir = await Deno.makeTempDir();
  const keygen = await omotai("policy", "keygen", "--out", `${dir}/key.json`);
  assert.equal(keygen.code, 0, keygen.out);
  assert.equal((await Deno.stat(`${dir}/key.json`)).mode! & 0o777, 0o600);
  const pub = keygen.out.match(/public key: (\S+)/)![1];
  await Deno.copyFile("policies-wasm/dist/path-allowlist.wasm", `${dir}/m.wasm`);
  const sign = await omotai(
    "policy",
    "sign",
    `${dir}/m.wasm`,
    "--key",
    `${dir}/key.json`,
    "--name",
    "my-paths",
    "--version",
    "0.1.0",
  );
  assert.equal(sign.code, 0, sign.out);
  const ok = await omotai("policy", "verify", `${dir}/m.wasm`, "--key", pub);
  assert.match(ok.out, /^ok: my-paths@0\.1\.0 \(rule, abi 1\)/);
  const project = await omotai("policy", "verify", `${dir}/m.wasm`);
  assert.equal(project.code, 1);
  assert.match(project.out, /KEY_NOT_TRUSTED/);
  const test = await omotai(
    "policy",
    "test",
    `${dir}/m.wasm`,
    "policies-wasm/modules/path_allowlist.cases.yaml",
  );
  assert.equal(test.code, 0, test.out);
  assert.match(test.out, /5 passed, 0 failed/);
  await Deno.writeTextFile(
    `${dir}/bad.yaml`,
    "cases:\n  - name: x\n    facts: { kind: navigate, target: { scheme: https, origin: https://a.test, path: /nope } }\n    expect: { decision: allow }\n",
  );
  const bad = await omotai("policy", "test", `${dir}/m.wasm`, `${dir}/bad.yaml`);
  assert.equal(bad.code, 1);
  assert.match(bad.out, /FAIL {2}x\n +expected: allow\n +actual: +deny PATH_NOT_ALLOWED/);
  await Deno.remove(dir, { recursive: true });
});
