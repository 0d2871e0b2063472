/**
 * The markers around page-controlled text. Everything between an open and its close came
 * from a web page; the per-session nonce and the neutralized arrows keep page text from
 * closing a block early or opening a fake runtime line.
 *
 * Both are the last step before page text is framed, not the place it is redacted first:
 * callers redact page strings before they shorten them (`redactCut()`); the block redacts
 * each line once more, whole, in case a caller built one from strings it did not cut.
 *
 * @module
 */
import { processRedactor, type Redactor } from "../redact/mod.ts";

/**
 * What a block holds: a page outline, the tab list (titles and URLs), a dialog's text, the
 * console output of a tab, or its requests (URLs and status texts).
 */
export type UntrustedKind = "page" | "tabs" | "dialog" | "console" | "network";

/** Keeps page text from imitating the block markers (`<<<` → `‹‹‹`, `>>>` → `›››`). */
export function neutralize(text: string): string {
  return text.replace(/<<<|>>>/g, (m) => m === "<<<" ? "‹‹‹" : "›››");
}

/**
 * The opening marker; `origin` is the runtime's reading of the page's origin (redacted: a
 * host name can hold a secret, lower-cased by the browser).
 */
export function untrustedOpen(
  kind: UntrustedKind,
  nonce: string,
  origin?: string,
  redactor: Redactor = processRedactor(),
): string {
  const shown = origin ? ` origin=${neutralize(redactor.redact(origin))}` : "";
  return `<<<untrusted-${kind} nonce=${nonce}${shown}>>>`;
}

/** The closing marker. */
export function untrustedClose(kind: UntrustedKind, nonce: string): string {
  return `<<<end-untrusted-${kind} nonce=${nonce}>>>`;
}

/** Page-controlled lines framed as one block, each line redacted and neutralized. */
export function untrustedBlock(
  kind: UntrustedKind,
  nonce: string,
  lines: string[],
  redactor: Redactor = processRedactor(),
): string {
  const shown = lines.map((l) => neutralize(redactor.redact(l)));
  return [untrustedOpen(kind, nonce), ...shown, untrustedClose(kind, nonce)].join("\n");
}
