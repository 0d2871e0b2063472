/**
 * The one writer both outline walks write through: it gathers a block's text runs into
 * lines, redacts every page string before anything shortens it, keeps each line's overview
 * form aligned with it, and stops at a line and character budget. A walk decides what a
 * node is; how it reads and when the outline ends is decided here.
 *
 * Every page string is redacted where it enters (a name or value before its 120-character
 * cut, a link target before the overview keeps only its origin, a text line before it is
 * split or briefed), so a cut can only fall in text that holds no secret (see
 * `runtime/redact/cut.ts`). A giant text run is read only as far as the budget can matter
 * plus a margin (`CUT_READ_MARGIN`), so a value straddling the budget is read whole.
 *
 * @module
 */
import { displayUrl } from "../net/mod.ts";
import {
  boundedRedact,
  CUT_READ_MARGIN,
  processRedactor,
  redactClip,
  redactCut,
  type Redactor,
} from "../redact/mod.ts";
import {
  briefText,
  type ControlFacts,
  controlLine,
  FRAME_CLOSE,
  frameOpenLine,
  headingLine,
  LINE_MAX,
  LIST_BULLET,
  MAX_FRAME_DEPTH,
  textLine,
} from "./outline_line.ts";

/** Limits of one outline. */
export interface OutlineLimits {
  /** Lines kept at most; the rest of the page is left out and `truncated` is set. */
  maxLines: number;
  /** Characters kept at most (all lines together). */
  maxChars: number;
}

/** Defaults: room for far more than 60,000 links, yet bounded for a page built to be huge. */
export const OUTLINE_LIMITS: OutlineLimits = { maxLines: 200_000, maxChars: 16_000_000 };

/** Counts of what the outline exposes, for tests and benchmarks. */
export interface OutlineStats {
  interactive: number;
  frames: number;
}

/** A finished outline: its lines, their overview form, counts and whether it was cut. */
export interface Outline {
  lines: string[];
  /** The overview form of each line, aligned with `lines` (empty for a continuation). */
  brief: string[];
  stats: OutlineStats;
  /** Whether the outline stopped at its line or character budget. */
  truncated: boolean;
}

/** Options of {@link OutlineWriter}. */
export interface OutlineWriterOptions {
  limits?: OutlineLimits;
  /** The process's redactor by default. */
  redactor?: Redactor;
}

/**
 * Builds the outline of a frame and its child frames; page strings are redacted with the
 * redactor (the process's by default) before anything shortens them.
 */
export type OutlineBuilder<F, R> = (
  root: F,
  issueRef: R,
  options?: OutlineWriterOptions,
) => Outline;

/**
 * The one way an outline is built, whatever it is read from: a writer made from the options,
 * `render` walking the root frame (depth 0) and the frames it holds into it, pending text
 * flushed at the end.
 */
export function outlineBuilder<F, R>(
  render: (frame: F, issueRef: R, out: OutlineWriter, depth: number) => void,
): OutlineBuilder<F, R> {
  return (root, issueRef, options = {}) => {
    const out = new OutlineWriter(options);
    render(root, issueRef, out, 0);
    return out.finish();
  };
}

/** Lines and their overview form, within the outline's budget. */
export class OutlineWriter {
  readonly lines: string[] = [];
  readonly brief: string[] = [];
  readonly stats: OutlineStats = { interactive: 0, frames: 0 };
  truncated = false;
  readonly #limits: OutlineLimits;
  readonly #redactor: Redactor;
  #chars = 0;
  #pieces: string[] = [];
  #pending = 0;
  #lastBox: unknown = undefined;
  #lastSpaced = false;
  #prefix = "";
  /**
   * The last line when it was a whole text or heading line: its text and whether it opened a
   * list item; undefined after any other line.
   */
  #lastText: { text: string; bullet: boolean } | undefined;

  constructor(options: OutlineWriterOptions = {}) {
    this.#limits = options.limits ?? OUTLINE_LIMITS;
    this.#redactor = options.redactor ?? processRedactor();
  }

  /** The outline written so far, pending text flushed. */
  finish(): Outline {
    this.flush();
    return { lines: this.lines, brief: this.brief, stats: this.stats, truncated: this.truncated };
  }

  /** A page string (name, value, heading) redacted, then cut to `max` characters. */
  clip(text: string, max: number): string {
    return redactClip(text, max, this.#redactor);
  }

  /** A page URL as shown (origin and path), redacted, then cut to a line's length. */
  url(url: string, base: string | undefined): string {
    return redactCut(displayUrl(url, base), LINE_MAX, { redactor: this.#redactor });
  }

  /**
   * A link's target as shown, or undefined for a link with a query to the page's own path (a
   * pager, a filter, a sort): the query is never shown, so its target would only repeat the
   * path, and the link reads as `[e3] "2"`. A link without a query keeps its target, so a
   * site's menu reads the same on every page (folds and carried refs depend on it).
   */
  target(url: string, page: string): string | undefined {
    const shown = this.url(url, page);
    return hasQuery(url) && shown === this.url(page, page) ? undefined : shown;
  }

  /**
   * Adds a text run. `box` identifies its container; runs of two different containers get
   * a space between them when either is `spaced` (a block box), never around inline
   * elements (`<em>`).
   */
  text(piece: string, box: unknown, spaced = true): void {
    if (this.truncated) return;
    // A giant run is cut before normalizing: past the budget it cannot be shown anyway.
    // The margin keeps a value that straddles the budget whole until `flush()` redacts it.
    const room = this.#limits.maxChars - this.#chars - this.#pending + CUT_READ_MARGIN;
    const cut = piece.length > room + 1;
    const clean =
      (cut ? boundedRedact(piece.slice(0, Math.max(room + 1, 0)), true, this.#redactor) : piece)
        .replace(/\s+/g, " ");
    if (!clean.trim()) {
      if (this.#pieces.length > 0) this.#push(" ");
      return;
    }
    const prev = this.#pieces.at(-1);
    if (
      prev !== undefined && box !== this.#lastBox && (spaced || this.#lastSpaced) &&
      !prev.endsWith(" ") && !clean.startsWith(" ")
    ) this.#push(" ");
    this.#push(clean);
    this.#lastBox = box;
    this.#lastSpaced = spaced;
  }

  /** Separates the next text run from the last one on the same line (table cells). */
  separator(sep: string): void {
    if (this.#pieces.length > 0) this.#push(sep);
  }

  /** The next line is a list item's. */
  bullet(): void {
    this.#prefix = LIST_BULLET;
  }

  /** The number of lines written so far (flushes pending text). */
  mark(): number {
    this.flush();
    return this.lines.length;
  }

  /** Drops lines written after `mark`. */
  rewind(mark: number): void {
    for (let i = mark; i < this.lines.length; i++) this.#chars -= this.lines[i].length + 1;
    this.lines.length = mark;
    this.brief.length = mark;
    this.#lastText = undefined;
  }

  /** A whole line (a control, a heading) and its overview form. */
  line(text: string, brief = text): void {
    this.flush();
    this.#emit(text, brief);
  }

  /** A heading line (`## Name`). */
  heading(level: number, name: string): void {
    this.flush();
    const bullet = this.#prefix !== "";
    this.#emit(headingLine(level, name), headingLine(level, name));
    if (!this.truncated) this.#lastText = { text: name, bullet };
  }

  /**
   * A control's line (`controlLine()`). A text or heading line just before it that only
   * repeats its name (a field's visible label, `First name` or `First name:`; a product
   * card's heading that is all link) is dropped: the control's line says it already, and
   * takes the dropped line's list bullet.
   */
  control(facts: ControlFacts): void {
    this.flush();
    const last = this.#lastText;
    if (last !== undefined && facts.name !== "" && last.text.replace(/\s*:$/, "") === facts.name) {
      const gone = this.lines.pop()!;
      this.brief.pop();
      this.#chars -= gone.length + 1;
      if (last.bullet) this.#prefix = LIST_BULLET;
    }
    this.#emit(...controlLine(facts));
  }

  /**
   * A child frame of a frame at `parentDepth` (the top one's is 0): the frame line, what
   * `render` writes of it, and `[/frame]`. A frame nested deeper than `MAX_FRAME_DEPTH` or showing Chromium's
   * error page (a frame that failed to load: not page content) is skipped; one that shows
   * nothing (error pages, empty ads) is taken back, as it costs lines and says nothing. False
   * when the budget ended before the frame: the walk stops there.
   */
  frame(url: string, parentDepth: number, render: () => void): boolean {
    if (parentDepth > MAX_FRAME_DEPTH || url.startsWith("chrome-error:")) return true;
    const mark = this.mark();
    this.line(frameOpenLine(this.url(url, undefined)));
    if (this.lines.length === mark) return false;
    render();
    if (this.mark() === mark + 1) this.rewind(mark);
    else this.closeFrame();
    return true;
  }

  /** The `[/frame]` line: written even past the budget, so frame blocks stay balanced. */
  closeFrame(): void {
    this.flush();
    this.#lastText = undefined;
    this.lines.push(FRAME_CLOSE);
    this.brief.push(FRAME_CLOSE);
    this.#chars += FRAME_CLOSE.length + 1;
  }

  /** Ends the current text line. */
  flush(): void {
    // Redacted whole, before the brief cut and the split: a value across text runs (or
    // across the split point) is found as one.
    const raw = this.#redactor.redact(this.#pieces.join("")).trim();
    this.#pieces = [];
    this.#pending = 0;
    this.#lastBox = undefined;
    // Lines of bare punctuation ("[", "] |", ".") left between links carry nothing.
    if (!/[\p{L}\p{N}]/u.test(raw)) return;
    // Each piece as a text line (`textLine()`): a split can open one with `[e12]` too.
    const brief = textLine(briefText(raw));
    const bullet = this.#prefix !== "";
    for (let i = 0; i < raw.length; i += LINE_MAX) {
      this.#emit(textLine(raw.slice(i, i + LINE_MAX)), i === 0 ? brief : "");
    }
    if (raw.length <= LINE_MAX && !this.truncated) this.#lastText = { text: raw, bullet };
  }

  #push(piece: string): void {
    // Whitespace between inline elements collapses to one space, as the browser shows it.
    const p = piece.startsWith(" ") && this.#pieces.at(-1)?.endsWith(" ") ? piece.slice(1) : piece;
    if (!p) return;
    this.#pieces.push(p);
    this.#pending += p.length;
  }

  #emit(text: string, brief: string): void {
    this.#lastText = undefined;
    if (this.truncated) return;
    const line = this.#prefix + text;
    if (
      this.lines.length >= this.#limits.maxLines ||
      this.#chars + line.length + 1 > this.#limits.maxChars
    ) {
      this.truncated = true;
      return;
    }
    this.lines.push(line);
    this.brief.push(brief && this.#prefix + brief);
    this.#chars += line.length + 1;
    this.#prefix = "";
  }
}

function hasQuery(url: string): boolean {
  try {
    return new URL(url).search !== "";
  } catch {
    return false;
  }
}
