/**
 * Where the egress guard's time goes: loads the benchmark's local page (201 requests) with
 * the guard complete, without audit rows, with the proxy's questions answered at once, and
 * with both, beside an unguarded browser, and reports the median load and the CPU each
 * process used (Linux `/proc`). One browser runs at a time, so Chromium's CPU in a window is
 * that browser's. Run: deno run -A bench/egress_profile.ts
 *
 * @module
 */
import { findBrowser, ProfileStore } from "../cdp/mod.ts";
import { SqliteAuditLog } from "../runtime/store/sqlite_audit_log.ts";
import { BrowserSession } from "../runtime/browser/browser_session.ts";
import { SqliteDomainStore } from "../runtime/store/sqlite_domain_store.ts";
import type { AuditSink } from "../runtime/store/audit_row.ts";
import { EgressProxy, type ProxyJudge } from "../runtime/egress/egress_proxy.ts";
import { egressHooks } from "../runtime/egress/egress_hooks.ts";
import type { GuardPause } from "../runtime/egress/request_guard.ts";
import { Boundary } from "../runtime/gate/boundary.ts";
import { median } from "./compare.ts";
import { benchWorld, loadTime, LOOPBACK_ONLY, served, SUBRESOURCES } from "./egress_bench.ts";
import { processRedactor } from "../runtime/redact/mod.ts";

const LOADS = 10;

/** CPU milliseconds so far per process kind: chromium by --type, deno main or proxy. */
function cpuByKind(): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const cmd = Deno.readTextFileSync(`/proc/${e.name}/cmdline`).split("\0").join(" ");
      let kind: string;
      if (cmd.includes("chrom")) {
        const type = /--type=(\S+)/.exec(cmd)?.[1] ?? "browser";
        kind = `chromium ${/sub-type=network/.test(cmd) ? "network" : type}`;
      } else if (Number(e.name) === Deno.pid) kind = "runtime";
      else if (cmd.includes("proxy_main")) kind = "proxy";
      else continue;
      const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // utime + stime, in clock ticks of 10 ms
      out.set(kind, (out.get(kind) ?? 0) + (Number(f[11]) + Number(f[12])) * 10);
    } catch { /* the process ended */ }
  }
  return out;
}

const instantJudge: ProxyJudge = {
  ask: () => Promise.resolve({ allow: true, reason: "OK", exact: true }),
  refused: () => {},
};

if (import.meta.main) {
  const world = await benchWorld("omotai-egress-profile-");
  const { origin, dataDir, db, policy, engine } = world;
  await using profiles = await ProfileStore.open(dataDir);
  const executable = findBrowser(Deno.env.get("OMOTAI_BROWSER"));
  const variants: {
    name: string;
    pause?: GuardPause;
    audit?: boolean;
    proxyAsks?: boolean;
    off?: boolean;
  }[] = [
    { name: "request_guard: all", pause: "all", audit: true, proxyAsks: true },
    { name: "request_guard: proxy (default)", pause: "proxy", audit: true, proxyAsks: true },
    { name: "proxy, no audit rows", pause: "proxy", audit: false, proxyAsks: true },
    { name: "proxy, answered at once", pause: "proxy", audit: true, proxyAsks: false },
    { name: "proxy, neither", pause: "proxy", audit: false, proxyAsks: false },
    { name: "guard off", off: true },
  ];
  const kinds = new Set<string>();
  const rows: { name: string; ms: number; cpu: Map<string, number> }[] = [];
  let run = 0;
  for (const v of variants) {
    const audit = v.audit ? new SqliteAuditLog(db, { redactor: processRedactor() }) : undefined;
    const sink: AuditSink = audit ?? { append: () => {} };
    const boundary = new Boundary({
      engine,
      domains: new SqliteDomainStore(db),
      audit,
      allowedOrigins: policy.allowed_origins,
    });
    await using proxy = EgressProxy.start();
    if (v.proxyAsks === false) {
      const listen = proxy.listen.bind(proxy);
      proxy.listen = () => listen(instantJudge);
    }
    await using session = v.off
      ? new BrowserSession({ profiles, executable, audit: sink, extraArgs: LOOPBACK_ONLY })
      : new BrowserSession({
        profiles,
        executable,
        audit: sink,
        hooks: egressHooks({ boundary, proxy, pause: v.pause }),
      });
    await loadTime(session, `${origin}/many?run=warm-${run++}`);
    const before = cpuByKind();
    const times: number[] = [];
    for (let i = 0; i < LOADS; i++) {
      const id = `p-${run++}`;
      times.push(await loadTime(session, `${origin}/many?run=${id}`));
      if (served.get(id) !== SUBRESOURCES + 1) throw new Error(`${v.name}: incomplete load`);
    }
    const after = cpuByKind();
    const cpu = new Map<string, number>();
    for (const [k, t] of after) {
      const d = t - (before.get(k) ?? 0);
      if (d > 0) {
        cpu.set(k, d);
        kinds.add(k);
      }
    }
    rows.push({ name: v.name, ms: median(times), cpu });
  }
  const cols = [...kinds].sort();
  console.log(
    [
      `## Where the egress guard's time goes (${LOADS} loads of ${SUBRESOURCES + 1} requests each)`,
      "",
      `| variant | median load (ms) | ${cols.join(" | ")} | CPU total (ms) |`,
      `|---|---:|${cols.map(() => "---:").join("|")}|---:|`,
      ...rows.map((r) =>
        `| ${r.name} | ${r.ms.toFixed(0)} | ${cols.map((c) => r.cpu.get(c) ?? 0).join(" | ")} | ${
          [...r.cpu.values()].reduce((a, b) => a + b, 0)
        } |`
      ),
      "",
      "CPU columns: milliseconds over the measured loads (runtime includes the test server).",
    ].join("\n"),
  );
  await world.close();
}
