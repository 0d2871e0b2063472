/**
 * The real pages of `../shared/corpus/pages/` (or `OMOTAI_CORPUS`) served on loopback, one
 * page per folder at `/<name>/`, for the benchmarks that load them. Their third-party
 * requests go nowhere: the runtimes under test refuse them, as they would on a live site.
 *
 * @module
 */
import { join } from "node:path";

/** The corpus folder. */
export const CORPUS_DIR: string = Deno.env.get("OMOTAI_CORPUS") ??
  new URL("../../shared/corpus/pages", import.meta.url).pathname;

/** The names of the corpus pages, sorted. */
export async function corpusNames(): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(CORPUS_DIR)) if (e.isDirectory) names.push(e.name);
  return names.sort();
}

/** Serves the corpus on a random loopback port; `extra` answers other paths first. */
export function serveCorpus(
  extra: (path: string) => Response | undefined = () => undefined,
): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = decodeURIComponent(new URL(req.url).pathname);
    const answered = extra(path);
    if (answered) return answered;
    const m = path.match(/^\/([\w.-]+)\/$/);
    if (!m) return new Response("not found", { status: 404 });
    try {
      const body = await Deno.readFile(join(CORPUS_DIR, m[1], "index.html"));
      return new Response(body, { headers: { "content-type": "text/html; charset=utf-8" } });
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
}
