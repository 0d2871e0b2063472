/**
 * The shared pieces of the generated-credential capture tests (`tests/capture_test.ts`,
 * `tests/capture_attack_test.ts`, `tests/shared_capture_test.ts`): the capture policy for the
 * two fake vendors (`tests/fixtures/capture_vendors.ts`, `tests/fixtures/hostile_vendor.ts`),
 * agents' MCP clients kept for disposal, one approved capture grant per output through a small
 * grant port (`Grants` over the SQLite or the PostgreSQL `GrantStore`), a vault secret
 * revealed apart from the runtime, and the leak search: every form of every minted value,
 * whole or in part, looked for in named places, each with its positive control.
 *
 * @module
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import type { Runtime } from "../../runtime/cli/start.ts";
import { Grants } from "../../runtime/grants/mod.ts";
import { SqliteGrantStore } from "../../runtime/store/sqlite_grant_store.ts";
import { secretForms } from "../../runtime/redact/mod.ts";
import { databasePath } from "../../runtime/store/database.ts";
import { rawKeySource, Vault, type VaultRecords } from "../../vault/mod.ts";
import type {
  FakeGithubOptions,
  MintedGithubApp,
  MintedLinearApp,
} from "../fixtures/capture_vendors.ts";
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

// --- races ------------------------------------------------------------------------------------

/** A fake GitHub's conversions held (see {@link holdConversions}). */
export interface HeldConversions {
  /** Settles once a capture reached the conversion: it leased, checked and the vendor minted. */
  reached: Promise<void>;
  /** Lets every conversion held (and every later one) answer; the options lose the hold. */
  open(): void;
}

/**
 * Holds every conversion of the fake GitHub of `options` until `open()`: a capture that
 * reached it keeps its lease, so a second capture into its targets meanwhile meets it.
 */
export function holdConversions(options: FakeGithubOptions): HeldConversions {
  let reached!: () => void;
  let open!: () => void;
  const arrived = new Promise<void>((r) => reached = r);
  const gate = new Promise<void>((r) => open = r);
  options.beforeConversion = () => {
    reached();
    return gate;
  };
  return {
    reached: arrived,
    open() {
      open();
      delete options.beforeConversion;
    },
  };
}

// --- grants and the vault ---------------------------------------------------------------------

/**
 * A SQLite grant store over `db` as `omotai grant` reaches it: no audit, the secrets looked
 * up in `db`'s vault.
 */
export function sqliteGrants(db: DatabaseSync): Grants {
  return new Grants(new SqliteGrantStore(db), {
    audit: { append() {} },
    secrets: { has: (id) => Vault.has(db, id) },
  });
}

/** Where capture grants are added: `Grants` over the SQLite or the PostgreSQL store. */
export type CaptureGrantPort = Pick<Grants, "add">;

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

/** The shortest form searched for: shorter ones could be in a place by chance. */
const SHORTEST_FORM = 12;
/** A value this long is searched for in part too (see {@link leakForms}). */
const IN_PART_FROM = 24;
/** The width and the step of the windows searched for in every form. */
const WINDOW = 16;
const WINDOW_STEP = 8;
/** The width of the pieces searched for as they are (every start, step 1). */
const PIECE = 12;

/**
 * The parts of `value` (code points, so an astral character is never cut) that are `width`
 * long and start every `step` characters, the last one ending the value; none overlaps a PEM
 * armor line (`-----BEGIN … KEY-----`), the same in every key and so no part of one.
 */
function partsOf(value: string, width: number, step: number): string[] {
  const cps = [...value];
  if (cps.length < width) return [];
  const armor: [number, number][] = [];
  let unit = 0;
  const unitToCp = new Map<number, number>();
  cps.forEach((c, i) => {
    unitToCp.set(unit, i);
    unit += c.length;
  });
  unitToCp.set(unit, cps.length);
  for (const m of value.matchAll(/-----[^\n]*?-----/g)) {
    armor.push([unitToCp.get(m.index)!, unitToCp.get(m.index + m[0].length)!]);
  }
  const starts = new Set<number>();
  for (let i = 0; i + width <= cps.length; i += step) starts.add(i);
  starts.add(cps.length - width);
  const parts: string[] = [];
  for (const i of starts) {
    if (armor.some(([a, b]) => i < b && i + width > a)) continue;
    parts.push(cps.slice(i, i + width).join(""));
  }
  return parts;
}

/**
 * Every form of `values` long enough to mean something when found (12 characters or more),
 * to the whole-or-in-part standard (no secret is seen whole or in part):
 * - each value whole, in every encoding `secretForms` knows (percent, HTML, base64 at each
 *   offset, hex, JSON, reversed);
 * - for a value of 24 characters or more, every 16-character window of it (step 8, the last
 *   one ending the value) in every such encoding, so any 23 characters of it in a row are
 *   found however they were encoded;
 * - and every 12-character piece of it (step 1) as it is, reversed, lower- and upper-cased,
 *   so any 12 characters of it in a row are found as they are.
 * A PEM's armor lines (`-----BEGIN RSA PRIVATE KEY-----`) are in every key and are no part.
 */
export function leakForms(values: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const v of values) for (const f of formsOfValue(v)) forms.add(f);
  return [...forms];
}

/** The forms of each value (see {@link leakForms}) made so far: a search repeats its values. */
const FORMS_OF = new Map<string, readonly string[]>();

/** The forms of one value (see {@link leakForms}). */
function formsOfValue(v: string): readonly string[] {
  const known = FORMS_OF.get(v);
  if (known) return known;
  const forms = new Set<string>();
  const add = (f: string) => {
    if (f.length >= SHORTEST_FORM) forms.add(f);
  };
  for (const f of secretForms(v)) add(f);
  if ([...v].length >= IN_PART_FROM) {
    for (const w of partsOf(v, WINDOW, WINDOW_STEP)) for (const f of secretForms(w)) add(f);
    for (const p of partsOf(v, PIECE, 1)) {
      add(p);
      add([...p].reverse().join(""));
      add(p.toLowerCase());
      add(p.toUpperCase());
    }
  }
  const out = [...forms];
  FORMS_OF.set(v, out);
  return out;
}

/** A form found in a text, and where it starts. */
interface LeakHit {
  form: string;
  at: number;
}

/**
 * The search of a text for `forms` (each at least {@link SHORTEST_FORM} long): the forms
 * indexed by their first 12 characters, the text read once from `from` (default 0), a position
 * looked up only when its first two characters begin some form. Every hit is reported, where
 * it starts.
 */
function leakSearcher(forms: readonly string[]): (text: string, from?: number) => LeakHit[] {
  const byKey = new Map<string, string[]>();
  const pairs = new Uint8Array(65536);
  const pair = (a: number, b: number) => ((a << 7) ^ b) & 0xffff;
  for (const f of forms) {
    const key = f.slice(0, SHORTEST_FORM);
    const same = byKey.get(key);
    if (same) same.push(f);
    else byKey.set(key, [f]);
    pairs[pair(f.charCodeAt(0), f.charCodeAt(1))] = 1;
  }
  return (text, from = 0) => {
    const hits: LeakHit[] = [];
    for (let at = from; at + SHORTEST_FORM <= text.length; at++) {
      if (!pairs[pair(text.charCodeAt(at), text.charCodeAt(at + 1))]) continue;
      const candidates = byKey.get(text.slice(at, at + SHORTEST_FORM));
      if (!candidates) continue;
      for (const form of candidates) if (text.startsWith(form, at)) hits.push({ form, at });
    }
    return hits;
  };
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
 * Asserts that no form of any value (see {@link leakForms}) is in any place, each place after
 * its positive control: the same search, run on a copy of the place's text with a value
 * planted after it, must find what was planted: once one encoded form of a value whole, once
 * 12 characters from the middle of a value of 24 or more (the values taken in turn from
 * place to place, and the forms too). There must be at least `atLeast` values.
 */
export function assertNoLeak(search: LeakSearch): void {
  const { values, places, atLeast } = search;
  assert.ok(values.length >= atLeast, `${values.length} values searched, ${atLeast} wanted`);
  const find = leakSearcher(leakForms(values));
  const whole = values.filter((v) => formsOfValue(v).length > 0);
  const long = values.filter((v) =>
    [...v].length >= IN_PART_FROM && partsOf(v, PIECE, 1).length > 0
  );
  assert.ok(whole.length > 0 && long.length > 0, "values to plant for the positive control");
  places.forEach(([where, text], n) => {
    const value = whole[n % whole.length];
    const encoded = secretForms(value).filter((f) => f.length >= SHORTEST_FORM && f !== value);
    const form = encoded.length ? encoded[(n * 7) % encoded.length] : value;
    const pieces = partsOf(long[n % long.length], PIECE, 1);
    const piece = pieces[Math.floor(pieces.length / 2)];
    for (const [what, planted] of [["an encoded form", form], ["12 characters", piece]]) {
      // Only a hit in what was planted counts; the place's own text is searched just below.
      const hits = find(`${text}\n${planted}`, text.length);
      assert.ok(
        hits.some((h) => h.at > text.length),
        `the positive control: the search finds ${what} of a value planted in ${where}`,
      );
    }
    const found = [...new Set(find(text).map((h) => h.form))];
    assert.deepEqual(
      found.slice(0, 10).map((h) => `${h.slice(0, 6)}…`),
      [],
      `a minted value (${found.length} forms, whole or in part) is in ${where}`,
    );
  });
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
 * What a runtime on SQLite keeps in `dataDir` as leak-search places: its audit rows (as JSON),
 * its database file's bytes and, when there is one, its write-ahead log's bytes (the database
 * runs in WAL mode: what was written lately is in `omotai.db-wal` until a checkpoint). The
 * files are read before the audit is, so no connection of this one's checkpoints them first.
 */
export async function storedPlaces(dataDir: string): Promise<[string, string][]> {
  const path = databasePath(dataDir);
  const latin1 = new TextDecoder("latin1");
  const bytes = latin1.decode(await Deno.readFile(path));
  let wal: string | undefined;
  try {
    wal = latin1.decode(await Deno.readFile(`${path}-wal`));
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const r = new DatabaseSync(path, { readOnly: true });
  let audit: string;
  try {
    audit = JSON.stringify(r.prepare("SELECT * FROM audit").all());
  } finally {
    r.close();
  }
  return [
    ["the audit", audit],
    ["the database's bytes", bytes],
    ...wal === undefined ? [] : [["the database's write-ahead log", wal] as [string, string]],
  ];
}
