/**
 * Long runs of links on overview pages (a docs sidebar, a mega menu, a footer of a hundred
 * links, a page of 60,000 items) fold into one runtime line naming their refs and their first
 * names: `<<<265 links: e22–e286; "Getting started: Overview", "Getting started: Setup", … ;
 * browser_find finds one by name, the full pages list them>>>`. The overview is for finding
 * one's way; a run of links costs most of it while telling the agent little more than that it
 * is there. Nothing is lost: the full pages list every line, and `browser_find` returns any of
 * them by name with its ref. The marker uses the block's own arrows, which page text cannot
 * produce (they are neutralized first), so a page cannot fake one.
 *
 * @module
 */
import { refSpan } from "./ref_span.ts";

/** Runs shorter than this stay as they are: an ordinary header or a list of results. */
export const RUN_FOLD_MIN = 20;
/** Names a fold line quotes, so the agent knows what the run is. */
const RUN_FOLD_NAMES = 3;

// An overview link line, neutralized: `[e3] "Home"`, in a list `- [e3] …`, a foreign
// target's origin after it, `[e3] link` when it has neither name nor arrow.
const LINK = /^(?:- )?\[(e\d+)\](?: link$| ("(?:[^"\\]|\\.)*")(?: -> \S+)?$| -> \S+$)/;

/** `lines` (overview lines, neutralized) with every run of {@link RUN_FOLD_MIN} links folded. */
export function foldLinkRuns(lines: readonly string[]): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    let j = i;
    while (j < lines.length && LINK.test(lines[j])) j++;
    if (j - i >= RUN_FOLD_MIN) {
      out.push(foldLine(lines.slice(i, j)));
      i = j;
    } else if (j > i) {
      out.push(...lines.slice(i, j));
      i = j;
    } else {
      out.push(lines[i++]);
    }
  }
  return out;
}

function foldLine(run: readonly string[]): string {
  const matches = run.map((l) => LINK.exec(l)!);
  const refs = matches.map((m) => m[1]);
  const names = matches.map((m) => m[2]).filter((n) => n !== undefined && n !== '""')
    .slice(0, RUN_FOLD_NAMES);
  return `<<<${run.length} links: ${refSpan(refs)}; ${
    names.length ? `${names.join(", ")}, …; ` : ""
  }browser_find finds one by name, the full pages list them>>>`;
}
