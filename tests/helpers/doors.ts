/**
 * The doors codemod: every product folder is entered through its `mod.ts`. For each import
 * or `export … from` in a product file that reaches into another folder's file (not its
 * `mod.ts`), it adds the names used to that folder's `mod.ts` (explicit named re-exports,
 * `export type { }` for names only ever used as types, never `export *`) and points the
 * statement at the `mod.ts`. A hand-written `mod.ts` keeps its text; what the codemod adds
 * sits below the {@link MARKER} line and is recomputed on every run (entries whose file or
 * name is gone are dropped), so it can be run again on a tree that moved.
 *
 *     deno run -A tests/helpers/doors.ts           # print what would change; exit 1 if anything would
 *     deno run -A tests/helpers/doors.ts --write   # change the files, then `deno fmt` them
 *
 * What it cannot rewrite (namespace, default and side-effect imports, dynamic imports, a
 * name two files of one folder export) it reports and leaves alone; `deno task layers`
 * then names those statements until they are rewritten by hand or listed in
 * `DOOR_EXCEPTIONS` (tests/helpers/layers.ts) with the reason.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { doorException, folderOf, LAYERS, modOf, sourceFiles } from "./layers.ts";

/** The line after which a `mod.ts` holds the re-exports this codemod keeps. */
export const MARKER =
  "// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).";

type Kind = "value" | "type";

/** One exported name of a module: whether it is a value, and the file that declares it. */
interface Exported {
  kind: Kind;
  origin: string;
}

/** One re-export a folder's `mod.ts` holds for other folders. */
interface Entry {
  name: string;
  /** The file inside the folder it comes from (repository path). */
  file: string;
  kind: Kind;
}

/** One named specifier of an import or export statement. */
interface Spec {
  name: string;
  alias?: string;
  type: boolean;
}

/** One static statement `import|export … from "<relative>"` of a file. */
interface Statement {
  start: number;
  end: number;
  keyword: "import" | "export";
  /** `import type` / `export type`. */
  typeOnly: boolean;
  clause: string;
  spec: string;
}

const STATEMENT_RE =
  /(?<=^|\n)[ \t]*(import|export)(\s+type)?\s+([^;"]*?)\s*from\s*"(\.{1,2}\/[^"]+)"(?:\s*with\s*\{[^}]*\})?;?[ \t]*(?:\n|$)/g;
const SIDE_EFFECT_RE = /(?<=^|\n)[ \t]*import\s*"(\.{1,2}\/[^"]+\.ts)"/g;
const DYNAMIC_RE = /import\(\s*"(\.{1,2}\/[^"]+\.ts)"\s*\)/g;

function statements(text: string): Statement[] {
  return [...text.matchAll(STATEMENT_RE)].map((m) => ({
    start: m.index!,
    end: m.index! + m[0].length,
    keyword: m[1] as "import" | "export",
    typeOnly: m[2] !== undefined,
    clause: m[3].trim(),
    spec: m[4],
  }));
}

/** The named specifiers of `{ a, type B, c as d }`, or undefined for any other clause. */
function namedSpecs(clause: string, typeOnly: boolean): Spec[] | undefined {
  const m = /^\{([^}]*)\}$/.exec(clause);
  if (!m) return undefined;
  const body = m[1].replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, "");
  const out: Spec[] = [];
  for (const raw of body.split(",")) {
    const part = raw.trim();
    if (!part) continue;
    const s = /^(type\s+)?([\w$]+)(?:\s+as\s+([\w$]+))?$/.exec(part);
    if (!s) return undefined;
    out.push({ name: s[2], alias: s[3], type: typeOnly || s[1] !== undefined });
  }
  return out;
}

function specText(s: Spec, all: boolean): string {
  return `${s.type && !all ? "type " : ""}${s.name}${s.alias ? ` as ${s.alias}` : ""}`;
}

/** A `@module` JSDoc block of `text`, wrapped at the formatter's 100 columns. */
function jsdoc(text: string): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && ` * ${line} ${word}`.length > 100) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return `/**\n${lines.map((l) => ` * ${l}\n`).join("")} *\n * @module\n */\n`;
}

/** The doors codemod over one repository. */
export class Doors {
  readonly #root: string;
  readonly #exports = new Map<string, Map<string, Exported>>();
  readonly #texts = new Map<string, string>();
  /** Lines telling what would change or what was left alone. */
  readonly report: string[] = [];
  /** Problems the codemod could not fix (also in {@link report}). */
  readonly problems: string[] = [];

  constructor(root: string) {
    this.#root = root;
  }

  #read(file: string): string | undefined {
    if (!this.#texts.has(file)) {
      const path = join(this.#root, file);
      if (!existsSync(path)) return undefined;
      this.#texts.set(file, Deno.readTextFileSync(path));
    }
    return this.#texts.get(file);
  }

  /** The names `file` exports, with their kind and declaring file (`export *` followed). */
  exportsOf(file: string, seen = new Set<string>()): Map<string, Exported> {
    const known = this.#exports.get(file);
    if (known) return known;
    const out = new Map<string, Exported>();
    const text = this.#read(file);
    if (text === undefined || seen.has(file)) return out;
    seen.add(file);
    const code = text.replace(/\/\*[\s\S]*?\*\/|(?<=^|\s)\/\/[^\n]*/g, "");
    for (
      const m of code.matchAll(
        /(?<=^|\n)export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(function\*?|abstract\s+class|class|const\s+enum|const|let|var|enum|namespace|interface|type)\s+([\w$]+)/g,
      )
    ) {
      if (m[1] === "type" && m[2] === "{") continue;
      const kind: Kind = m[1] === "interface" || m[1] === "type" ? "type" : "value";
      out.set(m[2], { kind, origin: file });
    }
    for (
      const m of code.matchAll(
        /(?<=^|\n)export(\s+type)?\s*(\{[^}]*\}|\*\s+as\s+[\w$]+|\*)\s*(?:from\s*"([^"]+)")?/g,
      )
    ) {
      const from = m[3]?.startsWith(".")
        ? relative(this.#root, resolve(this.#root, dirname(file), m[3]))
        : undefined;
      if (m[2] === "*") {
        if (from) {
          for (const [n, e] of this.exportsOf(from, seen)) if (n !== "default") out.set(n, e);
        }
        continue;
      }
      const ns = /^\*\s+as\s+([\w$]+)$/.exec(m[2]);
      if (ns) {
        out.set(ns[1], { kind: "value", origin: file });
        continue;
      }
      for (const s of namedSpecs(m[2], m[1] !== undefined) ?? []) {
        const inner = from
          ? this.exportsOf(from, seen).get(s.name)
          : this.#localKind(code, s.name, file);
        const kind: Kind = s.type ? "type" : inner?.kind ?? "value";
        out.set(s.alias ?? s.name, { kind, origin: inner?.origin ?? from ?? file });
      }
    }
    this.#exports.set(file, out);
    return out;
  }

  #localKind(code: string, name: string, file: string): Exported | undefined {
    const decl = new RegExp(
      `(?:^|\\n)\\s*(?:export\\s+)?(?:declare\\s+)?(interface|type|function\\*?|class|abstract\\s+class|const|let|var|enum)\\s+${
        name.replace("$", "\\$")
      }\\b`,
    ).exec(code);
    if (decl) {
      return {
        kind: decl[1] === "interface" || decl[1] === "type" ? "type" : "value",
        origin: file,
      };
    }
    const imported = statements(code).find((s) =>
      s.keyword === "import" &&
      (namedSpecs(s.clause, s.typeOnly) ?? []).some((x) => (x.alias ?? x.name) === name)
    );
    if (!imported) return undefined;
    const spec = namedSpecs(imported.clause, imported.typeOnly)!.find((x) =>
      (x.alias ?? x.name) === name
    )!;
    const from = relative(this.#root, resolve(this.#root, dirname(file), imported.spec));
    const inner = this.exportsOf(from).get(spec.name);
    return { kind: spec.type ? "type" : inner?.kind ?? "value", origin: inner?.origin ?? from };
  }

  /** A `mod.ts` split into its hand-written head and the entries below {@link MARKER}. */
  #splitMod(mod: string): { head: string | undefined; entries: Entry[] } {
    const text = this.#read(mod);
    if (text === undefined) return { head: undefined, entries: [] };
    const at = text.indexOf(MARKER);
    if (at < 0) return { head: text, entries: [] };
    const entries: Entry[] = [];
    for (const s of statements(text.slice(at))) {
      const file = relative(this.#root, resolve(this.#root, dirname(mod), s.spec));
      for (const x of namedSpecs(s.clause, s.typeOnly) ?? []) {
        entries.push({ name: x.name, file, kind: x.type ? "type" : "value" });
      }
    }
    return { head: text.slice(0, at), entries };
  }

  /** Computes every change; with `write`, makes it. True when something would change. */
  async run(write: boolean): Promise<boolean> {
    const files = await sourceFiles(this.#root);
    /** Entries each folder's mod.ts must hold, by folder then name. */
    const needs = new Map<string, Map<string, Entry>>();
    /** Per importer: the statements to point at a mod.ts. */
    const rewrites = new Map<string, { st: Statement; mod: string; specs: Spec[] }[]>();
    const need = (folder: string, e: Entry, where: string): boolean => {
      const row = needs.get(folder) ?? new Map<string, Entry>();
      needs.set(folder, row);
      const had = row.get(e.name);
      if (
        had &&
        this.exportsOf(had.file).get(e.name)?.origin !== this.exportsOf(e.file).get(e.name)?.origin
      ) {
        this.#problem(
          `${where}: ${e.name} comes from ${e.file}, but ${
            modOf(folder)
          } already gives ${e.name} from ${had.file}`,
        );
        return false;
      }
      row.set(e.name, {
        ...e,
        kind: had?.kind === "value" || e.kind === "value" ? "value" : "type",
      });
      return true;
    };

    for (const from of files) {
      const text = this.#read(from)!;
      const fromFolder = folderOf(from);
      for (const m of text.matchAll(SIDE_EFFECT_RE)) {
        this.#checkOnly(from, m[1], "side-effect import");
      }
      for (const m of text.matchAll(DYNAMIC_RE)) this.#checkOnly(from, m[1], "dynamic import()");
      for (const st of statements(text)) {
        if (!st.spec.endsWith(".ts")) continue;
        const to = relative(this.#root, resolve(this.#root, dirname(from), st.spec));
        const folder = folderOf(to);
        if (!folder || folder === fromFolder || to === modOf(folder)) continue;
        if (doorException(from, to)) continue;
        const where = `${from}: ${st.keyword} … from "${st.spec}"`;
        const specs = namedSpecs(st.clause, st.typeOnly);
        if (!specs) {
          this.#problem(`${where}: only named ${st.keyword}s can go through ${modOf(folder)}`);
          continue;
        }
        const exported = this.exportsOf(to);
        let ok = true;
        for (const s of specs) {
          const found = exported.get(s.name);
          if (!found) {
            this.#problem(`${where}: ${to} does not export ${s.name}`);
            ok = false;
            continue;
          }
          const kind: Kind = s.type || found.kind === "type" ? "type" : "value";
          ok = need(folder, { name: s.name, file: to, kind }, where) && ok;
        }
        if (!ok) continue;
        const list = rewrites.get(from) ?? [];
        list.push({ st, mod: modOf(folder), specs });
        rewrites.set(from, list);
      }
    }

    let changed = false;
    const written: string[] = [];
    // Each importer first (a mod.ts may be one: its own reach into another folder), its
    // statements pointed at the mod.ts, imports of one mod.ts merged.
    for (const [from, list] of [...rewrites].sort(([a], [b]) => a.localeCompare(b))) {
      changed = true;
      let text = this.#read(from)!;
      const byMod = new Map<string, { st: Statement; specs: Spec[] }[]>();
      for (const r of list) {
        this.report.push(`${from}: "${r.st.spec}" -> ${r.mod}`);
        const k = `${r.st.keyword} ${r.mod}`;
        byMod.set(k, [...(byMod.get(k) ?? []), r]);
      }
      // Imports already going through the same mod.ts join the merged statement.
      for (const st of statements(text)) {
        const to = relative(this.#root, resolve(this.#root, dirname(from), st.spec));
        const k = `${st.keyword} ${to}`;
        const specs = namedSpecs(st.clause, st.typeOnly);
        if (st.keyword === "import" && byMod.has(k) && specs) byMod.get(k)!.push({ st, specs });
      }
      const edits: { start: number; end: number; text: string }[] = [];
      for (const [k, group] of byMod) {
        const [keyword, mod] = k.split(" ");
        group.sort((a, b) => a.st.start - b.st.start);
        const specs: Spec[] = [];
        for (const s of group.flatMap((g) => g.specs)) {
          const same = specs.find((x) => x.name === s.name && x.alias === s.alias);
          if (same) same.type &&= s.type;
          else specs.push({ ...s });
        }
        const all = specs.every((s) => s.type);
        let path = relative(dirname(from), mod);
        if (!path.startsWith(".")) path = `./${path}`;
        const stmt = `${keyword}${all ? " type" : ""} { ${
          specs.map((s) => specText(s, all)).join(", ")
        } } from "${path}";\n`;
        edits.push({ start: group[0].st.start, end: group[0].st.end, text: stmt });
        for (const g of group.slice(1)) edits.push({ start: g.st.start, end: g.st.end, text: "" });
      }
      for (const e of edits.sort((a, b) => b.start - a.start)) {
        text = text.slice(0, e.start) + e.text + text.slice(e.end);
      }
      this.#texts.set(from, text);
      if (write) {
        Deno.writeTextFileSync(join(this.#root, from), text);
        written.push(from);
      }
    }

    // Each folder's mod.ts: the hand-written head, then the kept entries and the new ones.
    const folders = new Set([...needs.keys(), ...LAYERS.map((l) => l.folder)]);
    for (const folder of [...folders].sort()) {
      const mod = modOf(folder);
      const { head, entries: before } = this.#splitMod(mod);
      const handMade = head === undefined
        ? new Map<string, Exported>()
        : this.#headExports(mod, head);
      const want = new Map<string, Entry>();
      for (const e of before) {
        const now = this.exportsOf(e.file).get(e.name);
        if (!now) {
          this.report.push(`${mod}: drops ${e.name} (${e.file} no longer exports it)`);
          continue;
        }
        want.set(e.name, e);
      }
      for (const e of needs.get(folder)?.values() ?? []) {
        const hand = handMade.get(e.name);
        if (hand) {
          if (hand.kind === "type" && e.kind === "value") {
            this.#problem(`${mod} gives ${e.name} as a type only; another folder uses its value`);
          }
          continue;
        }
        const kept = want.get(e.name);
        if (
          kept && kept.file !== e.file &&
          this.exportsOf(kept.file).get(e.name)?.origin !==
            this.exportsOf(e.file).get(e.name)?.origin
        ) {
          this.#problem(
            `${mod}: ${e.name} is kept from ${kept.file} but now imported from ${e.file}`,
          );
          continue;
        }
        want.set(
          e.name,
          kept
            ? { ...kept, kind: kept.kind === "value" || e.kind === "value" ? "value" : "type" }
            : e,
        );
      }
      const key = (es: Iterable<Entry>) =>
        [...es].map((e) => `${e.file} ${e.name} ${e.kind}`).sort().join("\n");
      if (key(want.values()) === key(before)) continue;
      changed = true;
      const added = [...want.values()].filter((e) =>
        !before.some((b) => b.name === e.name && b.kind === e.kind)
      );
      this.report.push(
        `${mod}: ${head === undefined ? "new, " : ""}re-exports ${
          added.map((e) => e.name).join(", ") || "(fewer names)"
        }`,
      );
      if (write) {
        Deno.writeTextFileSync(
          join(this.#root, mod),
          this.#modText(folder, head, [...want.values()]),
        );
        written.push(mod);
      }
    }

    if (write && written.length > 0) {
      const fmt = await new Deno.Command(Deno.execPath(), {
        args: ["fmt", "--quiet", ...new Set(written)],
        cwd: this.#root,
      })
        .output();
      if (!fmt.success) this.#problem(`deno fmt failed: ${new TextDecoder().decode(fmt.stderr)}`);
    }
    return changed;
  }

  /** What the hand-written part of a mod.ts exports. */
  #headExports(mod: string, head: string): Map<string, Exported> {
    const saved = this.#texts.get(mod);
    this.#texts.set(`${mod}#head`, head);
    const out = this.exportsOf(`${mod}#head`);
    this.#exports.delete(`${mod}#head`);
    if (saved !== undefined) this.#texts.set(mod, saved);
    return out;
  }

  #modText(folder: string, head: string | undefined, entries: Entry[]): string {
    const job = LAYERS.find((l) => l.folder === folder)?.job ?? folder;
    const top = head ??
      jsdoc(`The door of ${folder}/ (${job}): other folders import from this file only.`);
    const byFile = new Map<string, Entry[]>();
    for (const e of entries) byFile.set(e.file, [...(byFile.get(e.file) ?? []), e]);
    const lines: string[] = [];
    for (const file of [...byFile.keys()].sort()) {
      let path = relative(dirname(modOf(folder)), file);
      if (!path.startsWith(".")) path = `./${path}`;
      const es = byFile.get(file)!.sort((a, b) => a.name.localeCompare(b.name));
      const values = es.filter((e) => e.kind === "value").map((e) => e.name);
      const types = es.filter((e) => e.kind === "type").map((e) => e.name);
      if (values.length > 0) lines.push(`export { ${values.join(", ")} } from "${path}";`);
      if (types.length > 0) lines.push(`export type { ${types.join(", ")} } from "${path}";`);
    }
    if (lines.length === 0) return top;
    return `${top.trimEnd()}\n\n${MARKER}\n${lines.join("\n")}\n`;
  }

  #checkOnly(from: string, spec: string, what: string): void {
    const to = relative(this.#root, resolve(this.#root, dirname(from), spec));
    const folder = folderOf(to);
    if (!folder || folder === folderOf(from) || to === modOf(folder) || doorException(from, to)) {
      return;
    }
    this.#problem(`${from}: ${what} of ${to} cannot be pointed at ${modOf(folder)}`);
  }

  #problem(line: string): void {
    this.problems.push(line);
    this.report.push(`LEFT ${line}`);
  }
}

if (import.meta.main) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  const write = Deno.args.includes("--write");
  const doors = new Doors(root);
  const changed = await doors.run(write);
  for (const line of doors.report) console.log(line);
  if (!write && changed) console.log("doors: the lines above would change; run with --write");
  if (doors.problems.length > 0) {
    console.log(`doors: ${doors.problems.length} statement(s) left as they are`);
  }
  Deno.exit((!write && changed) || doors.problems.length > 0 ? 1 : 0);
}
