import assert from "node:assert/strict";
import { BASELINE_SIG, baselineWasm } from "../../tests/helpers/policies.ts";
import { OmotaiError } from "../errors.ts";
import { loadModules, PROJECT_PUBLIC_KEY } from "./loader.ts";
import { parsePolicy } from "./policy_file.ts";
import { generateKeyPair } from "./signing.ts";

const rejected = (pattern: RegExp) => (e: unknown) =>
  e instanceof OmotaiError && e.code === "POLICY_MODULE_REJECTED" && pattern.test(e.message);

Deno.test("PROJECT_PUBLIC_KEY is the checked-in project key", async () => {
  const file = await Deno.readTextFile(
    new URL("../../policies-wasm/keys/project.pub", import.meta.url),
  );
  assert.equal(PROJECT_PUBLIC_KEY, file.trim());
});

Deno.test("loadModules() loads the bundled baseline by default", async () => {
  const specs = await loadModules(parsePolicy("allowed_origins: [http://a.test]\n"), undefined);
  assert.deepEqual(specs.map((s) => [s.name, s.kind]), [["baseline", "rule"]]);
  assert.deepEqual(JSON.parse(specs[0].config).allowed_origins, ["http://a.test"]);
});

Deno.test("loadModules() refuses unsigned, tampered and untrusted modules", async () => {
  const dir = await Deno.makeTempDir();
  const wasm = await baselineWasm();
  const sig = await Deno.readTextFile(BASELINE_SIG);
  const policyPath = `${dir}/policy.yaml`;
  const load = (trusted?: string) =>
    loadModules(
      parsePolicy(`modules:\n  - path: m.wasm\n${trusted ? `trusted_keys: ["${trusted}"]\n` : ""}`),
      policyPath,
    );
  await Deno.writeFile(`${dir}/m.wasm`, wasm);
  await assert.rejects(() => load(), rejected(/SIGNATURE_MISSING/));
  await Deno.writeTextFile(`${dir}/m.wasm.sig.json`, sig);
  assert.equal((await load()).length, 1);
  const other = await generateKeyPair();
  await assert.rejects(() => load(other.public_key), rejected(/KEY_NOT_TRUSTED/));
  const tampered = new Uint8Array(wasm);
  tampered[tampered.length - 1] ^= 0xff;
  await Deno.writeFile(`${dir}/m.wasm`, tampered);
  await assert.rejects(() => load(), rejected(/HASH_MISMATCH/));
  await Deno.writeFile(`${dir}/m.wasm`, wasm);
  await Deno.writeTextFile(`${dir}/m.wasm.sig.json`, "{ not json");
  await assert.rejects(() => load(), rejected(/unreadable signature/));
  await Deno.remove(dir, { recursive: true });
});
