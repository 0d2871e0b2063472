/**
 * The shared pieces of the generated-credential capture tests (`tests/capture_test.ts`,
 * `tests/capture_attack_test.ts`, `tests/shared_capture_test.ts`): the capture policy for the
 * two fake vendors (`tests/fixtures/capture_vendors.ts`, `tests/fixtures/hostile_vendor.ts`),
 * agents' MCP clients kept for disposal, one approved capture grant per output through a small
 * grant port (the SQLite `GrantStore` or the PostgreSQL `PgGrantStore`), a vault secret
 * revealed apart from the runtime, and the leak search: every form of every minted value,
 * looked for in named places, with its positive control.
 *
 * @module
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import type { Runtime } from "../../runtime/cli/start.ts";
import { type GrantPort, GrantStore } from "../../runtime/grants/mod.ts";
import { secretForms } from "../../runtime/redact/mod.ts";
import { databasePath } from "../../runtime/store/database.ts";
import { rawKeySource, Vault, type VaultRecords } from "../../vault/mod.ts";
import type { MintedGithubApp, MintedLinearApp } from "../fixtures/capture_vendors.ts";
import { keyedTransport, TestClient } from "./harness.ts";

/** The outputs of the `github_app` workflow. */
export const GITHUB_OUTPUTS = ["pem", "client_secret", "webhook_secret"] as const;
/** The outputs of the `linear_oauth_app` workflow. */
export const LINEAR_OUTPUTS = ["client_id", "client_secret"] as const;

/** A capture workflow the policy has a template for. */
export type CaptureWorkflow = "github_app" | "linear_oauth_app";

/** A fresh random vault key (32 bytes, base64), as `--vault-key` takes it. */
export function newVaultKey(): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
}

/** An output's name as it goes in a secret id: `client_secret` → `client-secret`. */
export function dashed(output: string): string {
  return output.replace(/_/g, "-");
}

/** What the runtime prints (console.error), kept while it still prints; `restore()` ends it. */
export function captureLogs(): { logs: string[]; restore(): void } {
  const logs: string[] = [];
  const error = console.error;
  console.error = (...args: unknown[]) => {
    logs.push(args.map(String).join(" "));
    error(...args);
  };
  return { logs, restore: () => console.error = error };
}

// --- the policy -----------------------------------------------------------------------------

/** What {@link capturePolicy} writes. */
export interface CapturePolicyOptions {
  /** The GitHub-style vendor: its origin is allowed, and the manifest flow's base URL. */
  github: { origin: string };
  /** The Linear-style vendor: its origin is allowed, its registration form the template's. */
  linear: { origin: string; registrationUrl: string };
  /** The app's name in both templates (the manifest's `name`, the form's application name). */
  name: string;
  /** More allowed origins, after the vendors'. */
  alsoAllowed?: readonly string[];
  /** The manifest's `default_permissions` (none when left out). */
  permissions?: Readonly<Record<string, string>>;
  /** Which templates to write: both unless one is `false`. */
  templates?: { github?: boolean; linear?: boolean };
}

/** A read-only policy YAML with the capture templates of the two fake vendors. */
export function capturePolicy(options: CapturePolicyOptions): string {
  const { github, linear, name } = options;
  const permissions = options.permissions
    ? `      default_permissions:\n${
      Object.entries(options.permissions).map(([k, v]) => `        ${k}: ${v}\n`).join("")
    }`
    : "";
  const githubTemplate = `  github_app:
    base_url: ${github.origin}
    manifest:
      name: ${name}
      url: https://example.test/app
      hook_attributes:
        url: https://example.test/hooks
      public: false
${permissions}`;
  const linearTemplate = `  linear_oauth_app:
    registration_url: ${linear.registrationUrl}
    application:
      name: ${name}
      developer: Omotai
      developer_url: https://example.test
      description: Registered by the runtime
      callback_urls:
        - https://example.test/callback
`;
  const origins = [github.origin, linear.origin, ...options.alsoAllowed ?? []];
  return `allowed_origins:
${origins.map((o) => `  - ${o}\n`).join("")}read_only: true
capture:
${options.templates?.github !== false ? githubTemplate : ""}${
    options.templates?.linear !== false ? linearTemplate : ""
  }`;
}

// --- agents' clients --------------------------------------------------------------------------

/** Agents' MCP clients, each kept until disposed: what they received is the MCP stream. */
export class AgentClients implements AsyncDisposable {
  /** Every client connected so far, in order. */
  readonly all: TestClient[] = [];
  readonly #name: string;

  /** `name` is the MCP client name the clients give. */
  constructor(name: string) {
    this.#name = name;
  }

  /** A new MCP session on `runtime` for the agent whose key is `key`. */
  async connect(runtime: Pick<Runtime, "url">, key: string): Promise<TestClient> {
    const client = new Client({ name: this.#name, version: "0" });
    await client.connect(keyedTransport(runtime.url!, key));
    const c = new TestClient(client);
    this.all.push(c);
    return c;
  }

  /** Every text any of the clients received, as one text. */
  stream(): string {
    return this.all.flatMap((c) => c.outputs).join("\n");
  }

  /** Ends every client's session, in order. */
  async [Symbol.asyncDispose](): Promise<void> {
    for (const c of this.all) await c[Symbol.asyncDispose]();
  }
}

// --- grants and the vault ---------------------------------------------------------------------

/**
 * A SQLite grant store over `db` as `omotai grant` reaches it: no audit, the secrets looked
 * up in `db`'s vault. Wrap it with `sqliteGrantPort` to add capture grants.
 */
export function sqliteGrantStore(db: DatabaseSync): GrantStore {
  return new GrantStore(db, {
    audit: { append() {} },
    secrets: { has: (id) => Vault.has(db, id) },
  });
}

/** Where capture grants are added: the SQLite `sqliteGrantPort(store)` or a `PgGrantStore`. */
export type CaptureGrantPort = Pick<GrantPort, "add">;

/** What every grant of one {@link captureGrants} shares unless a call says otherwise. */
export interface CaptureGrantDefaults {
  /** Each workflow's vendor origin: a grant's allowed origin unless a call names another. */
  origins: Readonly<Record<CaptureWorkflow, string>>;
  /** The grants' purpose. */
  purpose: string;
  /** Fresh target ids are `${prefix}-${n}-${dashed output}`, n counting the calls from 1. */
  prefix: string;
  /** The grants' agent unless a call names another (default "alice"). */
  agent?: string;
}

/** One call's choices (see {@link captureGrants}). */
export interface CaptureGrantOptions {
  /** The grant's only allowed origin (default: the workflow's vendor). */
  origin?: string;
  /** The agent the grants are for. */
  agent?: string;
  /** When they expire (default "1h"). */
  expires?: string;
  /** Each output's target secret id (default: a fresh one). */
  target?: (output: string) => string;
}

/** The grants of one call, by output: their ids and their target secret ids. */
export interface CaptureGrantSet {
  ids: Record<string, string>;
  targets: Record<string, string>;
}

/** Adds one approved `once` capture grant per output of a workflow. */
export type GrantCapture = (
  workflow: CaptureWorkflow,
  outputs: readonly string[],
  options?: CaptureGrantOptions,
) => Promise<CaptureGrantSet>;

/** A {@link GrantCapture} adding through `port`, with `defaults`. */
export function captureGrants(
  port: CaptureGrantPort,
  defaults: CaptureGrantDefaults,
): GrantCapture {
  let n = 0;
  return async (workflow, outputs, options = {}) => {
    const run = ++n;
    const ids: Record<string, string> = {};
    const targets: Record<string, string> = {};
    for (const output of outputs) {
      const secret_id = options.target?.(output) ?? `${defaults.prefix}-${run}-${dashed(output)}`;
      targets[output] = secret_id;
      ids[output] = (await port.add({
        secret_id,
        agent: options.agent ?? defaults.agent ?? "alice",
        purpose: defaults.purpose,
        mode: "once",
        expires: options.expires ?? "1h",
        uses: [{
          kind: "capture",
          allowed_origins: [options.origin ?? defaults.origins[workflow]],
          workflow,
          output,
        }],
      }, { approve: true })).id;
    }
    return { ids, targets };
  };
}

/**
 * Reveals a secret of the vault in `store` (a SQLite database or a shared store's records),
 * opened apart from any runtime with `key`; undefined when there is no such secret.
 */
export async function revealSecret(
  store: DatabaseSync | VaultRecords,
  key: string,
  id: string,
): Promise<string | undefined> {
  using vault = await Vault.open(store, rawKeySource(key));
  const has = store instanceof DatabaseSync ? Vault.has(store, id) : await Vault.has(store, id);
  return has ? await vault.reveal(id) : undefined;
}

// --- the leak search ------------------------------------------------------------------------

/**
 * What vendors minted, as the strings that must never be seen: each value whole, and a PEM's
 * long lines too. A GitHub client id (`Iv1.…`) is public and left out; a Linear one is captured
 * as a secret and kept.
 */
export function mintedSecrets(minted: readonly (MintedGithubApp | MintedLinearApp)[]): string[] {
  const out: string[] = [];
  for (const m of minted) {
    if ("pem" in m) {
      out.push(m.pem, m.client_secret, m.webhook_secret, m.code);
      out.push(...m.pem.split("\n").filter((l) => l.length >= 16 && !l.startsWith("-----")));
    } else {
      out.push(m.client_id, m.client_secret);
    }
  }
  return out;
}

/** Every form (encodings, case...) of `values` long enough to mean something when found. */
export function leakForms(values: readonly string[]): string[] {
  return [...new Set(values.flatMap((v) => secretForms(v)))].filter((f) => f.length >= 12);
}

/** A leak search (see {@link assertNoLeak}). */
export interface LeakSearch {
  /** The values that must be nowhere (see {@link mintedSecrets}). */
  values: readonly string[];
  /** Where to look: each place's name and its whole text. */
  places: readonly (readonly [string, string])[];
  /** The fewest values the search must have: a search for nothing finds nothing. */
  atLeast: number;
}

/**
 * Asserts that no form of any value is in any place, after the positive control: there are at
 * least `atLeast` values, and each is among its own forms (the search finds what it looks for).
 */
export function assertNoLeak(search: LeakSearch): void {
  const { values, places, atLeast } = search;
  const forms = leakForms(values);
  assert.ok(values.length >= atLeast, `${values.length} values searched, ${atLeast} wanted`);
  for (const v of values) {
    assert.ok(forms.some((f) => v.includes(f)), "the search finds each value it looks for");
  }
  for (const [where, text] of places) {
    const hits = forms.filter((f) => text.includes(f));
    assert.deepEqual(hits.map((h) => `${h.slice(0, 6)}…`), [], `a minted value is in ${where}`);
  }
}

/**
 * What `runtime`'s console API shows at `paths`, read with `token`: each page's text in order.
 * Asserts that each answers 200.
 */
export async function consolePages(
  runtime: Pick<Runtime, "url" | "consoleUrl">,
  token: string,
  paths: readonly string[],
): Promise<string[]> {
  const pages: string[] = [];
  for (const path of paths) {
    const res = await fetch(new URL(path, runtime.consoleUrl ?? runtime.url), {
      headers: { Authorization: `Bearer ${token}` },
    });
    const text = await res.text();
    assert.equal(res.status, 200, `${path}: ${text}`);
    pages.push(text);
  }
  return pages;
}

/**
 * What a runtime on SQLite keeps in `dataDir` as leak-search places: its audit rows (as JSON)
 * and its database file's bytes.
 */
export async function storedPlaces(dataDir: string): Promise<[string, string][]> {
  const r = new DatabaseSync(databasePath(dataDir), { readOnly: true });
  let audit: string;
  try {
    audit = JSON.stringify(r.prepare("SELECT * FROM audit").all());
  } finally {
    r.close();
  }
  const bytes = new TextDecoder("latin1").decode(await Deno.readFile(databasePath(dataDir)));
  return [["the audit", audit], ["the database's bytes", bytes]];
}
