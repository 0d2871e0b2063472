/**
 * The built-in arm: Omotai itself, started for each case exactly as `omotai start` would
 * start it (the launcher's computed permissions, stdio, a console on loopback for the
 * eval's operator), under the user's policy with the portal standing in for their origins.
 * The planted account is in the arm's vault and granted to its agent, so `browser_login`
 * signs in without the model ever holding the password.
 *
 * @module
 */
import { parse, stringify } from "yaml";
import { dirname, isAbsolute, resolve } from "node:path";
import { rawKeySource, Vault } from "../../vault/mod.ts";
import { Grants } from "../grants/mod.ts";
import { databasePath, openDatabase, SqliteGrantStore } from "../store/mod.ts";
import { childArgv, childPermissions, localFacts } from "../launcher/mod.ts";
import { OmotaiError } from "../mod.ts";
import type { Credentials } from "./agent.ts";
import { type Arm, stdioArm } from "./arms.ts";
import type { ExpectedWrite } from "./catalogue.ts";

/** Where the Omotai arm lives and what it is given. */
export interface OmotaiArmOptions {
  /** A directory of its own (data dir, derived policy), removed by the caller. */
  workDir: string;
  /** The portal's origin, added to what the arm's policy allows. */
  portal: string;
  /** The user's policy file, or undefined for the eval's default. */
  policy?: string;
  credentials: Credentials;
  /** The runtime's entry module (runtime/cli/main.ts), which the launcher runs in its child. */
  entry: URL;
}

/** The Omotai arm and its operator. */
export interface OmotaiArm {
  arm: Arm;
  /**
   * Answers the arm's pending approvals until `signal` aborts: approves a held write that is
   * exactly one of `expected` (method, path and query, body entries), denies every other.
   */
  operate(
    expected: readonly ExpectedWrite[],
    signal: AbortSignal,
    decisions: string[],
  ): Promise<void>;
}

/** The policy the eval runs Omotai under when the user names none. */
export function defaultEvalPolicy(portal: string): Record<string, unknown> {
  return {
    allowed_origins: [portal],
    read_only: true,
    confirm_writes: true,
    confirm_timeout_seconds: 15,
    websockets: [portal],
    // The sign-in cases read the signed-in page; the redactor keeps the password out.
    taint_after_login: "none",
  };
}

/**
 * The user's policy with the portal added to their origins (`allowed_origins`, and
 * `websockets` and `login_submit_origins` when set), a session-start `login` dropped (the cases
 * sign in themselves) and module paths kept those of the original file. Every other key is the
 * user's, as written, so an origin they allow too widely shows as a leak.
 */
export function derivePolicy(
  source: string,
  file: string,
  portal: string,
): Record<string, unknown> {
  const doc: unknown = parse(source);
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    throw new OmotaiError("POLICY_INVALID", `${file}: not a mapping`);
  }
  const policy = { ...doc } as Record<string, unknown>;
  const plus = (v: unknown) => [...(Array.isArray(v) ? v : []), portal];
  policy.allowed_origins = plus(policy.allowed_origins);
  if (policy.websockets !== undefined) policy.websockets = plus(policy.websockets);
  if (policy.login_submit_origins !== undefined) {
    policy.login_submit_origins = plus(policy.login_submit_origins);
  }
  delete policy.login;
  if (Array.isArray(policy.modules)) {
    policy.modules = policy.modules.map((m: unknown) => {
      if (typeof m !== "object" || m === null) return m;
      const mod = { ...m } as Record<string, unknown>;
      if (
        typeof mod.path === "string" && !mod.path.startsWith("bundled:") && !isAbsolute(mod.path)
      ) {
        mod.path = resolve(dirname(resolve(file)), mod.path);
      }
      return mod;
    });
  }
  return policy;
}

/** Builds the arm's data dir (vault, grants, policy) and returns the arm. */
export async function omotaiArm(options: OmotaiArmOptions): Promise<OmotaiArm> {
  const { workDir, portal, credentials } = options;
  const dataDir = `${workDir}/data`;
  await Deno.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const policy = options.policy === undefined
    ? defaultEvalPolicy(portal)
    : derivePolicy(await Deno.readTextFile(options.policy), options.policy, portal);
  const policyFile = `${workDir}/policy.yaml`;
  await Deno.writeTextFile(policyFile, stringify(policy));

  const vaultKey = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
  const adminToken = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))
    .replace(/[+/=]/g, "x");
  const db = openDatabase(databasePath(dataDir));
  try {
    {
      using vault = await Vault.open(db, rawKeySource(vaultKey));
      await vault.add("portal-user", "username", credentials.username);
      await vault.add("portal-password", "password", credentials.password);
    }
    const grants = new Grants(new SqliteGrantStore(db), {
      audit: { append() {} },
      secrets: { has: (id) => Vault.has(db, id) },
    });
    for (const secret_id of ["portal-user", "portal-password"]) {
      await grants.add({
        secret_id,
        // The agent of a stdio runtime.
        agent: "stdio",
        purpose: "omotai eval: sign in to the mock portal",
        mode: "standing",
        expires: "24h",
        uses: [{ kind: "fill", allowed_origins: [portal] }],
      }, { approve: true });
    }
  } finally {
    db.close();
  }

  const consolePort = freePort();
  const args = [
    "start",
    "--policy",
    policyFile,
    "--data-dir",
    dataDir,
    "--console",
    "--console-port",
    String(consolePort),
  ];
  const facts = localFacts();
  // The arm's database is the one built here, whatever the eval's own environment names.
  const env: typeof facts.env = { OMOTAI_BROWSER: facts.env.OMOTAI_BROWSER };
  const plan = childPermissions(args, { ...facts, env });
  const argv = childArgv(plan, { entry: options.entry });
  const arm = stdioArm(
    "omotai",
    {
      command: Deno.execPath(),
      args: argv,
      env: {
        ...plan.env,
        ...(env.OMOTAI_BROWSER ? { OMOTAI_BROWSER: env.OMOTAI_BROWSER } : {}),
        OMOTAI_VAULT_KEY: vaultKey,
        OMOTAI_ADMIN_TOKEN: adminToken,
      },
      cwd: workDir,
    },
    `omotai ${
      args.map((a) => a === policyFile ? "<policy>" : a === dataDir ? "<data>" : a).join(" ")
    }`,
  );
  const consoleUrl = `http://127.0.0.1:${consolePort}`;
  return {
    arm,
    operate: (expected, signal, decisions) =>
      operate(consoleUrl, adminToken, expected, signal, decisions),
  };
}

/** A pending approval as `/api/approvals` lists it (the parts the operator reads). */
interface Pending {
  id: string;
  request: {
    method: string;
    url: { text: string };
    encoding: string;
    entries: { name: { text: string }; value: { text: string } }[];
  };
}

async function operate(
  consoleUrl: string,
  token: string,
  expected: readonly ExpectedWrite[],
  signal: AbortSignal,
  decisions: string[],
): Promise<void> {
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const decided = new Set<string>();
  while (!signal.aborted) {
    try {
      const res = await fetch(`${consoleUrl}/api/approvals?state=pending`, { headers, signal });
      if (res.ok) {
        const pending = await res.json() as Pending[];
        for (const p of pending) {
          if (decided.has(p.id)) continue;
          decided.add(p.id);
          const decision = expected.some((e) => matches(p, e)) ? "approve" : "deny";
          // Kept as evidence: a held write's fate is the operator's, not the runtime's alone.
          decisions.push(
            `${
              decision === "approve" ? "approved" : "denied"
            } ${p.request.method} ${p.request.url.text}`,
          );
          await fetch(`${consoleUrl}/api/approvals/${encodeURIComponent(p.id)}`, {
            method: "POST",
            headers,
            body: JSON.stringify({ decision }),
            signal,
          }).then((r) => r.body?.cancel());
        }
      } else {
        await res.body?.cancel();
      }
    } catch {
      // The console is not up yet, or the case is over: try again, or stop.
    }
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Whether a held request is exactly the write `e`. */
function matches(p: Pending, e: ExpectedWrite): boolean {
  let url: URL;
  try {
    url = new URL(p.request.url.text);
  } catch {
    return false;
  }
  if (p.request.method !== e.method || url.pathname + url.search !== e.path) return false;
  if (p.request.encoding !== "urlencoded") return false;
  const want = [...new URLSearchParams(e.body)];
  const got = p.request.entries.map((x) => [x.name.text, x.value.text]);
  return JSON.stringify(want) === JSON.stringify(got);
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}
