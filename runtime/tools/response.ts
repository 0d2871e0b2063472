/**
 * Handlers fill a `ResponseBuilder`; `serialize()` alone decides what the model sees. Every
 * piece of text (results, notices, error and denial messages, the snapshot) is redacted on
 * its own before the pieces are joined, so none depends on a later step to be safe; the
 * pieces were redacted before they were cut where they were made (`redactCut()`). A notice, an
 * error's message and a denial's reason are one line each (`oneLine()`), arrows neutralized:
 * what they quote of a page never begins a line of its own nor reads as a block's marker. Results may span lines (a tab list, a block): their
 * makers frame page text (`untrustedBlock()`, `escapeLine()`).
 *
 * @module
 */
import { processRedactor, type Redactor } from "../redact/mod.ts";
import { neutralize, oneLine } from "../snapshot/mod.ts";

/** An MCP text content block. */
export interface TextContent {
  type: "text";
  text: string;
}

/** An MCP image content block: base64 bytes and their type. */
export interface ImageContent {
  type: "image";
  data: string;
  mimeType: string;
}

/** One MCP content block of a tool result. */
export type ContentBlock = TextContent | ImageContent;

/** The MCP tool result shape we produce: the runtime's text first, then any images. */
export interface ToolResult {
  [key: string]: unknown;
  content: [TextContent, ...ContentBlock[]];
  isError?: boolean;
}

/** A value an action typed into an element. */
export interface TypedValue {
  ref: string;
  value: string;
}

/** The view an action's result ends with: what changed, or reading mode's text. */
export type AfterSnapshot = "changes" | "read";

/** Collects a tool's outcome. */
export class ResponseBuilder {
  #results: string[] = [];
  #notices: string[] = [];
  #error: { code: string; message: string } | undefined;
  #denied: { reason: string; detail?: string } | undefined;
  #snapshot: string | undefined;
  #wantsSnapshot = false;
  #snapshotMode: AfterSnapshot = "changes";
  #images: ImageContent[] = [];
  #typed: TypedValue[] = [];
  readonly #redactor: Redactor;

  /** `redactor` (the process's by default) redacts every piece of text `serialize()` joins. */
  constructor(redactor: Redactor = processRedactor()) {
    this.#redactor = redactor;
  }

  /** Adds a one-line account of what happened. */
  result(line: string): this {
    this.#results.push(line);
    return this;
  }

  /** Adds something the runtime noticed on the side (a new tab, a restarted browser). */
  notice(line: string): this {
    this.#notices.push(line);
    return this;
  }

  /** Records a failure with its stable code. */
  error(code: string, message: string): this {
    this.#error = { code, message };
    return this;
  }

  /** Records a gate denial. */
  denied(reason: string, detail?: string): this {
    this.#denied = { reason, detail };
    return this;
  }

  /**
   * Says the action typed `value` into `ref`: the diff after it leaves out that field's line
   * when it reads exactly that (the result line already says what was typed). A page that
   * changed the value (uppercased, cut) still shows it.
   */
  typed(ref: string, value: string): this {
    this.#typed.push({ ref, value });
    return this;
  }

  /** The fields the action typed into, for the diff. */
  get typedFields(): readonly TypedValue[] {
    return this.#typed;
  }

  /**
   * Asks for a fresh snapshot at the end of the response: what changed (or the new page's
   * outline), or with `read` the page's main text (the outline when it has none).
   */
  includeSnapshot(mode: AfterSnapshot = "changes"): this {
    this.#wantsSnapshot = true;
    this.#snapshotMode = mode;
    return this;
  }

  /** Which view {@link includeSnapshot} asked for. */
  get snapshotMode(): AfterSnapshot {
    return this.#snapshotMode;
  }

  /** Whether a snapshot was asked for and not yet set. */
  get wantsSnapshot(): boolean {
    return this.#wantsSnapshot && this.#snapshot === undefined;
  }

  /** Sets the rendered snapshot text. */
  snapshot(text: string): this {
    this.#snapshot = text;
    return this;
  }

  /** Attaches an image (base64 `data` of `mimeType`) after the text. */
  image(data: string, mimeType: string): this {
    this.#images.push({ type: "image", data, mimeType });
    return this;
  }

  /** Whether the call failed or was denied. */
  get failed(): boolean {
    return this.#error !== undefined || this.#denied !== undefined;
  }

  /** What the model receives: the text, then any images. */
  serialize(): ToolResult {
    const red = (text: string) => this.#redactor.redact(text);
    const line = (text: string) => neutralize(oneLine(red(text)));
    const lines: string[] = [];
    if (this.#denied) {
      const { reason, detail } = this.#denied;
      lines.push(`denied: ${line(reason)}${detail ? ` (${line(detail)})` : ""}`);
    }
    if (this.#error) lines.push(`error: ${this.#error.code} (${line(this.#error.message)})`);
    for (const r of this.#results) lines.push(red(r));
    for (const n of this.#notices) lines.push(`notice: ${line(n)}`);
    // A blank line between the runtime's lines and the view; none before a view alone.
    if (this.#snapshot !== undefined) {
      lines.push(...(lines.length ? [""] : []), red(this.#snapshot));
    }
    const out: ToolResult = { content: [{ type: "text", text: lines.join("\n") }] };
    // A call that failed half-way shows no pixels it may have captured before failing.
    if (this.failed) out.isError = true;
    else out.content.push(...this.#images);
    return out;
  }
}
