/**
 * The notice that tells the model which requests were refused since its last snapshot (its
 * text says "blocked", the wording the model reads: docs/glossary.md): one
 * short line, grouped by reason, origins only (never a path or query), GET left implicit,
 * at most a few entries, because it rides along with every snapshot and costs tokens. An
 * origin is page-chosen (a host name can hold a password, lower-cased by the browser): it
 * is redacted as it is counted, before the notice groups, lists or leaves it out.
 *
 * @module
 */
import { processRedactor, type Redactor } from "../redact/mod.ts";

/** A request the egress guard refused, as the next snapshot lists it. */
export interface RefusedRequest {
  method: string;
  /** Origin only (or `scheme:`), never a path or query. */
  origin: string;
  reason: string;
  /** The request's CDP `Network` id (`Fetch.requestPaused` `networkId`), for the network log. */
  networkId?: string;
}

/** Distinct method/origin entries a notice lists before it says how many more. */
export const REFUSED_LISTED = 8;

/** Collects refused requests between two snapshots. */
export class RefusedRequests {
  #seen = new Map<string, { request: RefusedRequest; count: number }>();
  readonly #redactor: Redactor;

  /** `redactor` (the process's by default) redacts each request's strings as it is counted. */
  constructor(redactor: Redactor = processRedactor()) {
    this.#redactor = redactor;
  }

  /** Counts one refused request. */
  add(refused: RefusedRequest): void {
    const red = (s: string) => this.#redactor.redact(s);
    const r = { ...refused, method: red(refused.method), origin: red(refused.origin) };
    const key = `${r.reason} ${r.method} ${r.origin}`;
    const seen = this.#seen.get(key);
    if (seen) seen.count++;
    else this.#seen.set(key, { request: r, count: 1 });
  }

  /** The notice for everything collected so far (then forgets it), or undefined. */
  take(): string | undefined {
    if (this.#seen.size === 0) return undefined;
    const all = [...this.#seen.values()];
    this.#seen.clear();
    const total = all.reduce((n, b) => n + b.count, 0);
    const byReason = new Map<string, string[]>();
    for (const { request: r, count } of all.slice(0, REFUSED_LISTED)) {
      const entry = `${r.method === "GET" ? "" : `${r.method} `}${r.origin}${
        count > 1 ? ` x${count}` : ""
      }`;
      byReason.set(r.reason, [...(byReason.get(r.reason) ?? []), entry]);
    }
    const groups = [...byReason].map(([reason, entries]) => `${reason}: ${entries.join(", ")}`);
    const more = all.length > REFUSED_LISTED ? `; +${all.length - REFUSED_LISTED} more` : "";
    return `blocked ${total} request${total === 1 ? "" : "s"} since the last snapshot: ${
      groups.join("; ")
    }${more}`;
  }
}
