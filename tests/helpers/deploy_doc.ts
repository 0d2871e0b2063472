/**
 * docs/deploy.md read as the procedure it is: its "What to substitute" table (the only words a
 * reader replaces) and its tagged blocks (` ```sh deploy-NAME [each-runtime] [service]
 * [file=PATH] `), in order, with the table's placeholders replaced by a test's values. One
 * reading for every test that runs a piece of the doc (tests/deploy_doc_test.ts runs it all,
 * tests/shared_store_test.ts its HAProxy block, tests/helpers/postgres.ts its roles).
 *
 * @module
 */

/** One tagged block of the doc. */
export interface DeployBlock {
  /** Its `deploy-…` tag. */
  name: string;
  /** The info string's first word (`sh`, `sql`, `haproxy`, `ini`). */
  lang: string;
  body: string;
  /** Run on every runtime's machine, with that runtime's values. */
  eachRuntime: boolean;
  /** Keeps running (a runtime, the balancer). */
  service: boolean;
  /** The file the block is the content of, when it is one. */
  file?: string;
}

/** The doc's text. */
export async function readDeployDoc(): Promise<string> {
  return await Deno.readTextFile(new URL("../../docs/deploy.md", import.meta.url));
}

/** Every fenced block whose info string carries a `deploy-…` tag, in the doc's order. */
export function deployBlocks(markdown: string): DeployBlock[] {
  const out: DeployBlock[] = [];
  for (const m of markdown.matchAll(/^```(\S+)([^\n]*)\n([\s\S]*?)^```$/gm)) {
    const words = m[2].trim().split(/\s+/);
    const name = words.find((w) => w.startsWith("deploy-"));
    if (!name) continue;
    const file = words.find((w) => w.startsWith("file="))?.slice("file=".length);
    out.push({
      name,
      lang: m[1],
      body: m[3],
      eachRuntime: words.includes("each-runtime"),
      service: words.includes("service"),
      file,
    });
  }
  return out;
}

/** The block tagged `name`; throws when the doc has none. */
export function deployBlock(markdown: string, name: string): DeployBlock {
  const found = deployBlocks(markdown).find((b) => b.name === name);
  if (!found) throw new Error(`docs/deploy.md has no ${name} block`);
  return found;
}

/** The placeholders of the "What to substitute" table: each code span of its first column. */
export function placeholders(markdown: string): string[] {
  const at = markdown.indexOf("## What to substitute");
  if (at < 0) throw new Error('docs/deploy.md has no "What to substitute" table');
  const section = markdown.slice(at, markdown.indexOf("\n## ", at + 1));
  const rows = section.split("\n").filter((l) => l.startsWith("| `"));
  if (rows.length === 0) throw new Error('the "What to substitute" table has no rows');
  return rows.flatMap((row) => [...row.split("|")[1].matchAll(/`([^`]+)`/g)].map((m) => m[1]));
}

/**
 * `text` with every placeholder of `values` replaced, where it stands as a whole (not inside a
 * longer name or number: `10.0.0.1` is not in `10.0.0.11`), in one pass so a value is never
 * replaced again. Throws when `values` names a word the table does not list.
 */
export function substitute(text: string, values: ReadonlyMap<string, string>): string {
  const keys = [...values.keys()].sort((a, b) => b.length - a.length);
  if (keys.length === 0) return text;
  const escaped = keys.map((k) => k.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&"));
  const pattern = new RegExp(`(?<![\\w.-])(?:${escaped.join("|")})(?![\\w])`, "g");
  return text.replace(pattern, (word) => values.get(word)!);
}
