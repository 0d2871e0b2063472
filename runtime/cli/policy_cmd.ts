/**
 * `omotai policy keygen|sign|verify|test|build`.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { buildPolicies } from "../../policies-wasm/build.ts";
import { OmotaiError } from "../mod.ts";
import {
  FACTS_ABI_VERSION,
  formatResults,
  generateKeyPair,
  loadPolicyFile,
  ManifestSchema,
  PROJECT_PUBLIC_KEY,
  runCases,
  signModule,
  verifyModule,
} from "../policy/mod.ts";
import {
  POLICY_KEYGEN_OPTIONS,
  POLICY_SIGN_OPTIONS,
  POLICY_VERIFY_OPTIONS,
} from "../launcher/mod.ts";

/** Usage of the policy commands. */
export const POLICY_USAGE = `omotai policy keygen --out KEY.json
omotai policy sign MODULE.wasm --key KEY.json --name NAME --version X.Y.Z [--kind rule|classifier]
omotai policy verify MODULE.wasm [--key PUBLIC_KEY_BASE64 | --policy FILE]
omotai policy test MODULE.wasm CASES.yaml
omotai policy build [--sign KEY.json] [--out DIR]`;

/** Runs a policy subcommand; returns the exit code. */
export async function policyCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case "keygen": {
      const { values } = parseArgs({ args: rest, options: POLICY_KEYGEN_OPTIONS });
      if (!values.out) throw new OmotaiError("BAD_OPTION", "keygen needs --out KEY.json");
      const key = await generateKeyPair();
      await Deno.writeTextFile(values.out, JSON.stringify(key, null, 2) + "\n", {
        mode: 0o600,
        createNew: true,
      });
      console.log(
        `wrote ${values.out} (keep it secret)\nkey id:     ${key.key_id}\npublic key: ${key.public_key}`,
      );
      console.log("add the public key to trusted_keys in your policy file");
      return 0;
    }
    case "sign": {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: POLICY_SIGN_OPTIONS,
      });
      const [wasmPath] = positionals;
      if (!wasmPath || !values.key) {
        throw new OmotaiError("BAD_OPTION", "sign needs MODULE.wasm and --key KEY.json");
      }
      const manifest = ManifestSchema.safeParse({
        name: values.name,
        version: values.version,
        abi: FACTS_ABI_VERSION,
        kind: values.kind,
      });
      if (!manifest.success) {
        throw new OmotaiError(
          "BAD_OPTION",
          `sign: ${manifest.error.issues[0].path.join(".")}: ${manifest.error.issues[0].message}`,
        );
      }
      const key = JSON.parse(await Deno.readTextFile(values.key));
      const sig = await signModule(
        await Deno.readFile(wasmPath),
        manifest.data,
        key.private_key,
        key.public_key,
      );
      await Deno.writeTextFile(`${wasmPath}.sig.json`, JSON.stringify(sig, null, 2) + "\n");
      console.log(
        `signed ${wasmPath} as ${manifest.data.name}@${manifest.data.version} (key ${sig.key_id})`,
      );
      return 0;
    }
    case "verify": {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: POLICY_VERIFY_OPTIONS,
      });
      const [wasmPath] = positionals;
      if (!wasmPath) throw new OmotaiError("BAD_OPTION", "verify needs MODULE.wasm");
      const trusted = values.key
        ? [values.key]
        : values.policy
        ? (await loadPolicyFile(values.policy)).trusted_keys ?? [PROJECT_PUBLIC_KEY]
        : [PROJECT_PUBLIC_KEY];
      let signature: unknown;
      try {
        signature = JSON.parse(await Deno.readTextFile(`${wasmPath}.sig.json`));
      } catch {
        signature = undefined;
      }
      const { manifest, sha256 } = await verifyModule(
        await Deno.readFile(wasmPath),
        signature,
        trusted,
        wasmPath,
      );
      console.log(
        `ok: ${manifest.name}@${manifest.version} (${manifest.kind}, abi ${manifest.abi}) sha256 ${sha256}`,
      );
      return 0;
    }
    case "test": {
      const [wasmPath, casesPath] = rest;
      if (!wasmPath || !casesPath) {
        throw new OmotaiError("BAD_OPTION", "test needs MODULE.wasm CASES.yaml");
      }
      const results = await runCases(
        await Deno.readFile(wasmPath),
        await Deno.readTextFile(casesPath),
        casesPath,
      );
      console.log(formatResults(results));
      return results.every((r) => r.ok) ? 0 : 1;
    }
    case "build":
      await buildPolicies(rest);
      return 0;
    default:
      console.error(POLICY_USAGE);
      return 2;
  }
}
