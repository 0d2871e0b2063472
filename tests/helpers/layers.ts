/**
 * The project's layers and the check that keeps them: reads every import of every source
 * file (tests and benchmarks aside) and reports imports that run up a layer or cross a
 * permission boundary, and import circles. `deno task layers` prints the folder graph.
 *
 * @module
 */
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** A folder's allowed imports (folders, relative to the repository root). */
export interface LayerRule {
  folder: string;
  /** What the folder is for, as docs/architecture.md says it. */
  job: string;
  may: readonly string[];
  /** Only `import type` from these (interfaces handed in by cli/start.ts). */
  typesOnly?: readonly string[];
}

const ROOT = "runtime";
const BASE = [ROOT];

/** Bottom to top: a folder may import only folders listed before it, and only these. */
export const LAYERS: readonly LayerRule[] = [
  // The one base of coded errors: below cdp/ and vault/, so they stay leaves of the rest.
  {
    folder: "shared",
    job: "CodedError, the base of every coded error; the byte-rate meter of cdp/ and proxy/",
    may: [],
  },
  { folder: "cdp", job: "typed CDP client, Chromium process, profiles, targets", may: ["shared"] },
  { folder: "vault", job: "encrypted secrets (a leaf like cdp/)", may: ["shared"] },
  { folder: "runtime/net", job: "origins, paths, addresses, hosts, URL display", may: [] },
  {
    folder: "runtime/proxy",
    job: "the egress proxy child (--allow-net only)",
    may: ["shared", "runtime/net"],
  },
  { folder: ROOT, job: "errors, log, version (main.ts is the entry)", may: ["shared"] },
  {
    folder: "runtime/isolation",
    job: "browser isolation: detection, a network namespace and a cgroup per browser",
    may: [...BASE, "cdp"],
  },
  {
    folder: "runtime/store",
    job:
      "persistence: SQLite and PostgreSQL databases, migrations, tenants; per concept one …Store port, its adapters and contract suite",
    // net/: the adapters store origins in the one normalized form; an approval record keeps
    // its held request, parsed by net/.
    may: [...BASE, "runtime/net"],
  },
  {
    folder: "runtime/redact",
    job: "secret values and their encodings turned into [redacted]",
    may: BASE,
  },
  {
    folder: "runtime/audit",
    job:
      "the audit's rules above its store: signed checkpoints and their signer, the JSONL mirror and its verify",
    may: [...BASE, "runtime/store", "runtime/redact"],
  },
  {
    folder: "runtime/grants",
    job: "grants: a secret bound to an agent, a use and origins; the one flow over GrantStore",
    may: [...BASE, "runtime/net", "runtime/store"],
  },
  {
    folder: "runtime/policy",
    job: "facts, decisions, policy file, signed WASM engine",
    may: [...BASE, "runtime/net"],
  },
  {
    folder: "runtime/launcher",
    job: "the omotai command: reads its command line, runs the runtime with its permissions",
    // cdp/: which browser the runtime would start; policy/: which modules a policy names;
    // isolation/: what its detection reads and runs.
    may: [...BASE, "cdp", "runtime/policy", "runtime/isolation"],
  },
  {
    folder: "runtime/snapshot",
    job: "outline and page rendering",
    may: [...BASE, "cdp", "runtime/net", "runtime/redact"],
  },
  {
    folder: "runtime/browser",
    job: "one session's Chromium: tabs, snapshots, refs, element ops, state",
    may: [
      ...BASE,
      "cdp",
      "runtime/net",
      "runtime/redact",
      "runtime/policy",
      "runtime/snapshot",
      // The one shell that reaches /proc (a hung renderer's pid) and cgroupfs.
      "runtime/isolation",
    ],
    // The audit's row types and its writer port (AuditSink, AuditWriter), handed in.
    typesOnly: ["runtime/store"],
  },
  {
    folder: "runtime/gate",
    job: "the gate, boundary, approver port, audit rows",
    may: [...BASE, "runtime/net", "runtime/store", "runtime/policy"],
  },
  {
    folder: "runtime/egress",
    job: "request guard, proxy judge, proxy parent, egress hooks",
    may: [
      ...BASE,
      "cdp",
      "runtime/net",
      "runtime/policy",
      "runtime/browser",
      "runtime/gate",
      "runtime/proxy",
    ],
    // The audit's writer port (AuditSink), handed in.
    typesOnly: ["runtime/store"],
  },
  {
    folder: "runtime/login",
    job: "runtime-performed login: credential fields, TOTP, push challenges",
    may: [
      ...BASE,
      "cdp",
      "vault",
      "runtime/net",
      "runtime/redact",
      "runtime/grants",
      "runtime/browser",
    ],
  },
  {
    folder: "runtime/capture",
    job: "generated-credential capture: reviewed vendor workflows writing into the vault",
    may: [
      ...BASE,
      "cdp",
      "vault",
      "runtime/net",
      "runtime/store",
      "runtime/policy",
      "runtime/grants",
      "runtime/browser",
      "runtime/login",
    ],
  },
  {
    folder: "runtime/tools",
    job: "tool definitions, their facts, the pipeline, the response",
    may: [
      ...BASE,
      "cdp",
      "runtime/net",
      "runtime/policy",
      "runtime/snapshot",
      "runtime/browser",
      "runtime/gate",
      "runtime/redact",
      "runtime/grants",
      "runtime/login",
      "runtime/capture",
    ],
  },
  {
    folder: "runtime/mcp",
    job: "MCP server per connection, HTTP app, transports",
    may: [
      ...BASE,
      "runtime/net",
      "runtime/store",
      "runtime/browser",
      "runtime/gate",
      "runtime/redact",
      "runtime/tools",
    ],
  },
  {
    folder: "runtime/approvals",
    job: "the board of human decisions: approvals, operator questions, push challenges",
    may: [...BASE, "runtime/store", "runtime/net"],
    // Only the Approver port and its types: the gate calls the queue, never the reverse.
    typesOnly: ["runtime/gate"],
  },
  { folder: "runtime/demo", job: "the demo shop of `task start`", may: [] },
  { folder: "ui", job: "operator console", may: [], typesOnly: ["runtime", "cdp", "vault"] },
  {
    folder: "runtime/eval",
    job: "`omotai eval`: attack catalogue, loopback world, agents, arms, reports",
    may: [
      ...BASE,
      "cdp",
      "vault",
      "runtime/net",
      "runtime/store",
      "runtime/grants",
      "runtime/policy",
      "runtime/launcher",
      // The report's HTML escapes text as the console's pages do.
      "ui",
    ],
  },
  { folder: "runtime/cli", job: "commands; wires every layer together", may: ["*"] },
];

/** Files that may import beyond their folder's rule. */
const ENTRY_POINTS: Record<string, readonly string[]> = {
  // The launcher, and the runtime's entry it starts in a child process.
  "runtime/main.ts": ["runtime/launcher", "runtime/cli"],
};

/** One import of one file. */
export interface ImportEdge {
  from: string;
  to: string;
  typeOnly: boolean;
  /** `import()` of a module, or `new URL()` of a file (a path handed on, not an import). */
  via?: "dynamic" | "url";
}

/**
 * Imports that may reach past a folder's `mod.ts` (a file or a folder on each side), each
 * with why. Everything else from another folder goes through that folder's `mod.ts`.
 */
export const DOOR_EXCEPTIONS: readonly { from: string; to: string; why: string }[] = [
  {
    from: "runtime/proxy",
    to: "runtime/net",
    why: "the proxy child is cached with `deno cache --no-config runtime/proxy/proxy_main.ts` " +
      "and runs with --allow-net only: runtime/net/mod.ts also carries request_view_schema.ts, " +
      'whose bare `"zod"` does not resolve without deno.json',
  },
  {
    from: "runtime/cli/compiled_main.ts",
    to: "runtime/proxy/proxy_main.ts",
    why: "the compiled binary runs the proxy child's entry itself: a process entry, not an API",
  },
];

/** The file other folders import a layer folder through. */
export function modOf(folder: string): string {
  return `${folder}/mod.ts`;
}

/** Whether `from` may import `to` past `to`'s folder's `mod.ts` ({@link DOOR_EXCEPTIONS}). */
export function doorException(from: string, to: string): boolean {
  const side = (rule: string, file: string) =>
    rule === file || (rule.endsWith(".ts") ? false : folderOf(file) === rule);
  return DOOR_EXCEPTIONS.some((x) => side(x.from, from) && side(x.to, to));
}

/**
 * Imports that skip a folder's door: a file importing another layer folder's file other
 * than its `mod.ts`, or its own folder's `mod.ts` (an evaluation circle). `new URL()` paths
 * are files handed to a child process, not imports.
 */
export function bypassedDoors(edges: readonly ImportEdge[]): string[] {
  const problems: string[] = [];
  for (const e of edges) {
    if (e.via === "url") continue;
    const from = folderOf(e.from);
    const to = folderOf(e.to);
    if (!from || !to) continue;
    if (from === to) {
      if (e.to === modOf(to) && e.from !== e.to) {
        problems.push(`${e.from} imports its own folder's ${e.to} (an evaluation circle)`);
      }
    } else if (e.to !== modOf(to) && !doorException(e.from, e.to)) {
      problems.push(`${e.from} imports ${e.to} (not through ${modOf(to)})`);
    }
  }
  return problems;
}

const IMPORT_RE =
  /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[\s\S]*?\s+from\s+)?"(\.{1,2}\/[^"]+)"|new URL\("(\.{1,2}\/[^"]+)", import\.meta\.url\)|import\("(\.{1,2}\/[^"]+)"\)/g;

/** Source files of the layered folders (tests, benchmarks and fixtures excluded). */
export async function sourceFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(join(root, dir))) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (e.name.endsWith(".ts") && !e.name.endsWith("_test.ts")) out.push(path);
    }
  };
  for (const top of ["shared", "cdp", "vault", "runtime", "ui"]) {
    try {
      await walk(top);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  return out.sort();
}

/** Every relative import of `files`, resolved to repository paths. */
export async function readImports(root: string, files: string[]): Promise<ImportEdge[]> {
  const edges: ImportEdge[] = [];
  for (const from of files) {
    const text = await Deno.readTextFile(join(root, from));
    for (const m of text.matchAll(IMPORT_RE)) {
      const spec = m[3] ?? m[4] ?? m[5];
      // A URL of a data folder (bundled modules) is a path, not an import.
      if (!spec.endsWith(".ts")) continue;
      const to = relative(root, resolve(root, dirname(from), spec));
      const via = m[4] ? "url" : m[5] ? "dynamic" : undefined;
      edges.push({ from, to, typeOnly: m[2] !== undefined, ...(via ? { via } : {}) });
    }
  }
  return edges;
}

/** The layer folder a file belongs to (the deepest rule folder containing it). */
export function folderOf(file: string): string | undefined {
  let best: string | undefined;
  for (const { folder } of LAYERS) {
    const inside = folder === ROOT ? dirname(file) === ROOT : file.startsWith(`${folder}/`);
    if (inside && (!best || folder.length > best.length)) best = folder;
  }
  return best;
}

/** Imports no rule allows, one line each. */
export function forbiddenImports(edges: readonly ImportEdge[]): string[] {
  const rules = new Map(LAYERS.map((r) => [r.folder, r]));
  const problems: string[] = [];
  for (const e of edges) {
    const from = folderOf(e.from);
    const to = folderOf(e.to) ?? dirname(e.to);
    if (!from || from === to) continue;
    const rule = rules.get(from)!;
    const allowed = rule.may.includes("*") || rule.may.includes(to) ||
      ENTRY_POINTS[e.from]?.includes(to) ||
      (e.typeOnly && rule.typesOnly?.some((t) => to === t || to.startsWith(`${t}/`)));
    if (!allowed) problems.push(`${e.from} imports ${e.to} (${from}/ may not import ${to}/)`);
  }
  return problems;
}

/** Import circles between files, each as the files it passes through. */
export function importCircles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const circles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, "open");
    stack.push(f);
    for (const t of next.get(f) ?? []) {
      if (state.get(t) === "open") circles.push([...stack.slice(stack.indexOf(t)), t]);
      else if (!state.has(t)) visit(t);
    }
    stack.pop();
    state.set(f, "done");
  };
  for (const f of [...next.keys()].sort()) if (!state.has(f)) visit(f);
  return circles;
}

/** Folder-level graph: which folder imports which, with counts. */
export function folderGraph(edges: readonly ImportEdge[]): Map<string, Map<string, number>> {
  const graph = new Map<string, Map<string, number>>();
  for (const e of edges) {
    const from = folderOf(e.from);
    const to = folderOf(e.to) ?? dirname(e.to);
    if (!from || from === to) continue;
    const row = graph.get(from) ?? new Map<string, number>();
    row.set(to, (row.get(to) ?? 0) + 1);
    graph.set(from, row);
  }
  return graph;
}

if (import.meta.main) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  const edges = await readImports(root, await sourceFiles(root));
  const graph = folderGraph(edges);
  for (const rule of LAYERS) {
    const row = [...(graph.get(rule.folder) ?? [])].map(([to, n]) => `${to} (${n})`);
    console.log(`${rule.folder}/  ${rule.job}\n    imports: ${row.join(", ") || "nothing"}`);
  }
  const problems = [
    ...forbiddenImports(edges),
    ...bypassedDoors(edges),
    ...importCircles(edges).map((c) => c.join(" -> ")),
  ];
  for (const p of problems) console.log(`FORBIDDEN ${p}`);
  if (problems.length > 0) Deno.exit(1);
}
