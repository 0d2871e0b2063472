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
import { ARROW_LIKE, ESCAPE, foldChar } from "./line_escape.ts";

/**
 * What a block holds: a page outline, the tab list (titles and URLs), a dialog's text, the
 * page log of a tab, or its requests (URLs and status texts).
 */
// "console" is the marker the model reads for the page log (`<<<untrusted-console …>>>`), named
// after `browser_console_messages`: an external name, kept (docs/glossary.md).
export type UntrustedKind = "page" | "tabs" | "dialog" | "console" | "network";

/**
 * Keeps page text from imitating the block's markers, or the runtime's `<<<…>>>` lines inside
 * a block: every run of three or more arrows, as they read after folding (`fold()` in
 * `line_escape.ts`: NFKC and lookalikes, so `＜`, `﹤`, `‹`, `«`, `〈`, `⟨`, `⋘` count, and
 * characters that draw nothing between them do not break a run), is written as escaped ASCII
 * arrows, one `\<` (or `\>`) per arrow it reads as: `‹‹‹untrusted-page` → `\<\<\<untrusted-page`.
 * What comes out holds no run of arrows, whatever is folded. Idempotent.
 */
export function neutralize(text: string): string {
  if (!ARROW_LIKE.test(text)) return text;
  let out = "";
  // The run being read: its characters as the page wrote them, its arrow and how many it
  // reads as; characters that draw nothing after its last arrow wait in `gap`.
  let run = "";
  let arrow = "";
  let count = 0;
  let gap = "";
  const flush = () => {
    out += (count >= 3 ? (ESCAPE + arrow).repeat(count) : run) + gap;
    run = gap = arrow = "";
    count = 0;
  };
  for (const ch of text) {
    const f = foldChar(ch);
    if (/^(?:<+|>+)$/.test(f)) {
      if (count > 0 && f[0] !== arrow) flush();
      run += gap + ch;
      gap = "";
      arrow = f[0];
      count += f.length;
    } else if (f === "" && count > 0) {
      gap += ch;
    } else {
      flush();
      out += ch;
    }
  }
  flush();
  return out;
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
