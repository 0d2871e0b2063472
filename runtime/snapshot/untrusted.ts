/**
 * The markers around page-controlled text. Everything between an open and its close came
 * from a web page; the per-session nonce and the neutralized arrows keep page text from
 * closing a block early or opening a fake runtime line.
 *
 * @module
 */

/**
 * What a block holds: a page outline, the tab list (titles and URLs), a dialog's text, the
 * console output of a tab, or its requests (URLs and status texts).
 */
export type UntrustedKind = "page" | "tabs" | "dialog" | "console" | "network";

/** Keeps page text from imitating the block markers (`<<<` → `‹‹‹`, `>>>` → `›››`). */
export function neutralize(text: string): string {
  return text.replace(/<<<|>>>/g, (m) => m === "<<<" ? "‹‹‹" : "›››");
}

/** The opening marker; `origin` is the runtime's reading of the page's origin. */
export function untrustedOpen(kind: UntrustedKind, nonce: string, origin?: string): string {
  return `<<<untrusted-${kind} nonce=${nonce}${origin ? ` origin=${origin}` : ""}>>>`;
}

/** The closing marker. */
export function untrustedClose(kind: UntrustedKind, nonce: string): string {
  return `<<<end-untrusted-${kind} nonce=${nonce}>>>`;
}

/** Page-controlled lines framed as one block, each line neutralized. */
export function untrustedBlock(kind: UntrustedKind, nonce: string, lines: string[]): string {
  return [untrustedOpen(kind, nonce), ...lines.map(neutralize), untrustedClose(kind, nonce)]
    .join("\n");
}
