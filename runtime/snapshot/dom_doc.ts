/**
 * Index-based reading of one document of a DOM snapshot (`DOMSnapshot.captureSnapshot`):
 * children in compressed arrays, attributes, layout and the computed styles the visibility
 * rule reads (`visibility.ts`), and the element kinds the outline treats alike. Built in two passes
 * over the node arrays, with no per-node objects, since a hostile page can make them huge.
 *
 * @module
 */
import type { Protocol } from "../../cdp/mod.ts";
import type { ElementFacts } from "./visibility.ts";

type DocumentSnapshot = Protocol.DOMSnapshot.DocumentSnapshot;

/** Node types of the DOM standard. */
export const ELEMENT = 1;
export const TEXT = 3;
export const DOCUMENT_FRAGMENT = 11;

/** Elements whose content is never page text. */
export const SKIP_TAGS = new Set([
  "SCRIPT",
  "STYLE",
  "TEMPLATE",
  "NOSCRIPT",
  "HEAD",
  "TITLE",
  "svg",
  "SVG",
  "CANVAS",
  "IMG",
  "VIDEO",
  "AUDIO",
  "OPTION",
  "OPTGROUP",
  "DATALIST",
]);

/** Elements that start and end a line (the accessibility outline's block roles). */
export const BLOCK_TAGS = new Set([
  "HTML",
  "BODY",
  "P",
  "LI",
  "UL",
  "OL",
  "DL",
  "DT",
  "DD",
  "TABLE",
  "THEAD",
  "TBODY",
  "TFOOT",
  "TR",
  "CAPTION",
  "BLOCKQUOTE",
  "PRE",
  "SECTION",
  "ARTICLE",
  "NAV",
  "MAIN",
  "HEADER",
  "FOOTER",
  "ASIDE",
  "FORM",
  "FIGURE",
  "FIGCAPTION",
  "ADDRESS",
  "FIELDSET",
  "LEGEND",
  "DETAILS",
  "SUMMARY",
  "DIALOG",
  "HR",
  "MENU",
]);

/** Index-based views of one document snapshot. */
export class Doc {
  readonly n: number;
  readonly strings: readonly string[];
  readonly nodes: Protocol.DOMSnapshot.NodeTreeSnapshot;
  readonly #nodeName: number[];
  readonly #nodeType: number[];
  readonly #attrs: number[][];
  /** Children of node i are childList[childStart[i] .. childStart[i + 1]), in document order. */
  readonly childStart: Int32Array;
  readonly childList: Int32Array;
  readonly #layout: Int32Array;
  readonly #styles: number[][];
  readonly #inputValue: Map<number, number>;
  readonly #textValue: Map<number, number>;
  readonly #checked: Set<number>;
  readonly #selected: Set<number>;
  readonly #pseudo: Set<number>;
  readonly #userAgentRoots: Set<number>;
  #ids: Map<string, number> | undefined;
  #labelsFor: Map<string, number> | undefined;

  constructor(document: DocumentSnapshot, strings: readonly string[]) {
    const nodes = document.nodes;
    this.nodes = nodes;
    this.strings = strings;
    const parents = nodes.parentIndex ?? [];
    const n = parents.length;
    this.n = n;
    this.#nodeName = nodes.nodeName ?? [];
    this.#nodeType = nodes.nodeType ?? [];
    this.#attrs = nodes.attributes ?? [];
    // Children in compressed form: two passes over parentIndex, no per-node arrays.
    const counts = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) {
      const p = parents[i];
      if (p >= 0 && p < n && p !== i) counts[p + 1]++;
    }
    for (let i = 0; i < n; i++) counts[i + 1] += counts[i];
    const childList = new Int32Array(n);
    const fill = counts.slice(0, n);
    for (let i = 0; i < n; i++) {
      const p = parents[i];
      if (p >= 0 && p < n && p !== i) childList[fill[p]++] = i;
    }
    this.childStart = counts;
    this.childList = childList;
    this.#layout = new Int32Array(n).fill(-1);
    const layoutNodes = document.layout?.nodeIndex ?? [];
    for (let li = 0; li < layoutNodes.length; li++) {
      const ni = layoutNodes[li];
      if (ni >= 0 && ni < n && this.#layout[ni] < 0) this.#layout[ni] = li;
    }
    this.#styles = document.layout?.styles ?? [];
    this.#inputValue = rareStrings(nodes.inputValue);
    this.#textValue = rareStrings(nodes.textValue);
    this.#checked = new Set(nodes.inputChecked?.index ?? []);
    this.#selected = new Set(nodes.optionSelected?.index ?? []);
    this.#pseudo = new Set(nodes.pseudoType?.index ?? []);
    this.#userAgentRoots = new Set<number>();
    const roots = nodes.shadowRootType;
    roots?.index.forEach((node, i) => {
      if (strings[roots.value[i]] === "user-agent") this.#userAgentRoots.add(node);
    });
  }

  type(i: number): number {
    return this.#nodeType[i] ?? 0;
  }

  /** Upper-case tag of an HTML element (SVG names keep their case). */
  tag(i: number): string {
    return this.strings[this.#nodeName[i]] ?? "";
  }

  value(i: number): string {
    return this.strings[this.nodes.nodeValue?.[i] ?? -1] ?? "";
  }

  backendId(i: number): number | undefined {
    return this.nodes.backendNodeId?.[i];
  }

  /** An attribute's value; `name` is lower-case, as the HTML parser stores names. */
  attr(i: number, name: string): string | undefined {
    const a = this.#attrs[i];
    if (!a) return undefined;
    for (let k = 0; k + 1 < a.length; k += 2) {
      if (this.strings[a[k]] === name) return this.strings[a[k + 1]] ?? "";
    }
    return undefined;
  }

  /** Whether the node is rendered: it has a layout object and is not `visibility:hidden`. */
  visible(i: number): boolean {
    const li = this.#layout[i];
    if (li < 0) return false;
    const v = this.#style(li, 1);
    return v !== "hidden" && v !== "collapse";
  }

  /**
   * What the visibility rule reads of element `i` (visibility.ts). An element without a
   * layout object reads as `display: contents`: the snapshot cannot tell one from
   * `display: none`, so what it holds is judged node by node (a node without a layout object
   * is not {@link visible}).
   */
  facts(i: number): ElementFacts {
    const li = this.#layout[i];
    return {
      box: true,
      display: li < 0 ? "contents" : this.#style(li, 0),
      visibility: li < 0 ? "visible" : this.#style(li, 1),
      contentVisibility: li < 0 ? "visible" : this.#style(li, 2),
      inert: this.attr(i, "inert") !== undefined,
      ariaHidden: this.attr(i, "aria-hidden") ?? null,
    };
  }

  /** The node's computed `display` (empty when it has no layout object). */
  display(i: number): string {
    const li = this.#layout[i];
    return li < 0 ? "" : this.#style(li, 0);
  }

  /** Nodes never walked: pseudo-elements and the browser's own shadow trees. */
  skipped(i: number): boolean {
    return this.#pseudo.has(i) || this.#userAgentRoots.has(i);
  }

  inputValue(i: number): string | undefined {
    const s = this.#inputValue.get(i);
    return s === undefined ? undefined : this.strings[s];
  }

  textValue(i: number): string | undefined {
    const s = this.#textValue.get(i);
    return s === undefined ? undefined : this.strings[s];
  }

  checked(i: number): boolean {
    return this.#checked.has(i);
  }

  selected(i: number): boolean {
    return this.#selected.has(i);
  }

  /** The element with this id (first in document order), for `aria-labelledby`. */
  byId(id: string): number | undefined {
    if (!this.#ids) {
      this.#ids = new Map();
      for (let i = 0; i < this.n; i++) {
        const v = this.type(i) === ELEMENT ? this.attr(i, "id") : undefined;
        if (v && !this.#ids.has(v)) this.#ids.set(v, i);
      }
    }
    return this.#ids.get(id);
  }

  /** The `<label for=id>` naming the element with this id. */
  labelFor(id: string): number | undefined {
    if (!this.#labelsFor) {
      this.#labelsFor = new Map();
      for (let i = 0; i < this.n; i++) {
        if (this.type(i) !== ELEMENT || this.tag(i) !== "LABEL") continue;
        const v = this.attr(i, "for");
        if (v && !this.#labelsFor.has(v)) this.#labelsFor.set(v, i);
      }
    }
    return this.#labelsFor.get(id);
  }

  #style(li: number, which: number): string {
    return this.strings[this.#styles[li]?.[which] ?? -1] ?? "";
  }
}

export function rareStrings(
  data: Protocol.DOMSnapshot.RareStringData | undefined,
): Map<number, number> {
  const map = new Map<number, number>();
  data?.index.forEach((node, i) => map.set(node, data.value[i]));
  return map;
}

/** Pushes the children of `i` so that they pop in document order. */
export function pushKids(doc: Doc, i: number, stack: number[]): void {
  for (let k = doc.childStart[i + 1] - 1; k >= doc.childStart[i]; k--) stack.push(doc.childList[k]);
}

/** Whether an element is a `contenteditable` root (or inside one, for its children). */
export function isEditableRoot(doc: Doc, i: number): boolean {
  const v = doc.attr(i, "contenteditable");
  return v !== undefined && v.trim().toLowerCase() !== "false";
}
