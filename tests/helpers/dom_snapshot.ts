/**
 * Canned DOM snapshots, as `DOMSnapshot.captureSnapshot` returns them (pre-order nodes, one
 * string table, layout only for rendered nodes), built from a small element tree, for the
 * DOM-snapshot outline tests.
 *
 * @module
 */
import type { Protocol } from "../../cdp/mod.ts";
import { type DomFrame, domFrames } from "../../runtime/snapshot/dom_outline.ts";

type CaptureSnapshotResponse = Protocol.DOMSnapshot.CaptureSnapshotResponse;

/** An element of a synthetic page; a string is a text node. */
export interface El {
  tag: string;
  attrs?: Record<string, string>;
  kids?: Node[];
  /** No layout object (display:none and everything under it). */
  none?: boolean;
  display?: string;
  visibility?: string;
  /** Computed `content-visibility` (not inherited). */
  contentVisibility?: string;
  inputValue?: string;
  textValue?: string;
  checked?: boolean;
  selected?: boolean;
  /** Index of the document (in the same snapshot) this frame owner shows. */
  contentDocument?: number;
  shadowRoot?: { type: string; kids: Node[] };
}
/** A node of a synthetic page: an element, or a string for a text node. */
export type Node = El | string;

const BLOCKS = new Set(["DIV", "P", "UL", "LI", "BODY", "HTML", "H1", "H2", "TABLE", "TR"]);

/** Builds DOMSnapshot documents as Chromium lays them out (pre-order, one string table). */
export class SnapshotBuilder {
  strings: string[] = [];
  documents: Protocol.DOMSnapshot.DocumentSnapshot[] = [];
  #index = new Map<string, number>();
  #nextBackend = 1;

  str(s: string): number {
    let i = this.#index.get(s);
    if (i === undefined) {
      i = this.strings.length;
      this.strings.push(s);
      this.#index.set(s, i);
    }
    return i;
  }

  /** Adds a document of frame `frameId` whose body holds `body`; returns its index. */
  document(frameId: string, url: string, body: Node[], title = "T"): number {
    const nodes: Required<
      Pick<
        Protocol.DOMSnapshot.NodeTreeSnapshot,
        "parentIndex" | "nodeType" | "nodeName" | "nodeValue" | "backendNodeId" | "attributes"
      >
    > = {
      parentIndex: [],
      nodeType: [],
      nodeName: [],
      nodeValue: [],
      backendNodeId: [],
      attributes: [],
    };
    const rare = {
      inputValue: { index: [] as number[], value: [] as number[] },
      textValue: { index: [] as number[], value: [] as number[] },
      inputChecked: { index: [] as number[] },
      optionSelected: { index: [] as number[] },
      contentDocumentIndex: { index: [] as number[], value: [] as number[] },
      shadowRootType: { index: [] as number[], value: [] as number[] },
    };
    const layout = { nodeIndex: [] as number[], styles: [] as number[][] };
    const add = (
      parent: number,
      type: number,
      name: string,
      value: string,
      attrs: Record<string, string>,
      style?: { display: string; visibility: string; contentVisibility?: string },
    ): number => {
      const i = nodes.parentIndex.length;
      nodes.parentIndex.push(parent);
      nodes.nodeType.push(type);
      nodes.nodeName.push(this.str(name));
      nodes.nodeValue.push(this.str(value));
      nodes.backendNodeId.push(this.#nextBackend++);
      nodes.attributes.push(Object.entries(attrs).flatMap(([k, v]) => [this.str(k), this.str(v)]));
      if (style) {
        layout.nodeIndex.push(i);
        layout.styles.push([
          this.str(style.display),
          this.str(style.visibility),
          this.str(style.contentVisibility ?? "visible"),
        ]);
      }
      return i;
    };
    // Iterative, so that tests of very deep pages do not depend on this builder's stack.
    const stack: { node: Node; parent: number; shown: boolean; visibility: string }[] = [];
    const doc = add(-1, 9, "#document", "", {});
    const html = add(doc, 1, "HTML", "", {}, { display: "block", visibility: "visible" });
    const bodyIndex = add(html, 1, "BODY", "", {}, { display: "block", visibility: "visible" });
    for (let k = body.length - 1; k >= 0; k--) {
      stack.push({ node: body[k], parent: bodyIndex, shown: true, visibility: "visible" });
    }
    while (stack.length > 0) {
      const { node, parent, shown, visibility } = stack.pop()!;
      if (typeof node === "string") {
        add(parent, 3, "#text", node, {}, shown ? { display: "inline", visibility } : undefined);
        continue;
      }
      const isShown = shown && !node.none;
      const vis = node.visibility ?? visibility;
      const display = node.display ?? (BLOCKS.has(node.tag) ? "block" : "inline");
      const i = add(
        parent,
        1,
        node.tag,
        "",
        node.attrs ?? {},
        isShown
          ? { display, visibility: vis, contentVisibility: node.contentVisibility }
          : undefined,
      );
      if (node.inputValue !== undefined) {
        rare.inputValue.index.push(i);
        rare.inputValue.value.push(this.str(node.inputValue));
      }
      if (node.textValue !== undefined) {
        rare.textValue.index.push(i);
        rare.textValue.value.push(this.str(node.textValue));
      }
      if (node.checked) rare.inputChecked.index.push(i);
      if (node.selected) rare.optionSelected.index.push(i);
      if (node.contentDocument !== undefined) {
        rare.contentDocumentIndex.index.push(i);
        rare.contentDocumentIndex.value.push(node.contentDocument);
      }
      const kids = node.kids ?? [];
      // Options of a closed select are not laid out.
      const kidsShown = isShown && node.tag !== "SELECT";
      for (let k = kids.length - 1; k >= 0; k--) {
        stack.push({ node: kids[k], parent: i, shown: kidsShown, visibility: vis });
      }
      if (node.shadowRoot) {
        const root = add(i, 11, "#document-fragment", "", {});
        rare.shadowRootType.index.push(root);
        rare.shadowRootType.value.push(this.str(node.shadowRoot.type));
        const sk = node.shadowRoot.kids;
        for (let k = sk.length - 1; k >= 0; k--) {
          stack.push({ node: sk[k], parent: root, shown: isShown, visibility: vis });
        }
      }
    }
    this.documents.push({
      documentURL: this.str(url),
      title: this.str(title),
      baseURL: this.str(url),
      contentLanguage: -1,
      encodingName: -1,
      publicId: -1,
      systemId: -1,
      frameId: this.str(frameId),
      nodes: { ...nodes, ...rare },
      layout: { ...layout, bounds: [], text: [], stackingContexts: { index: [] } },
      textBoxes: { layoutIndex: [], bounds: [], start: [], length: [] },
    });
    return this.documents.length - 1;
  }

  snapshot(): CaptureSnapshotResponse {
    return { documents: this.documents, strings: this.strings };
  }
}

/** The URL of the frame {@link domPage} builds. */
export const URL0 = "http://127.0.0.1:8000/page";

/**
 * One frame of `body` (plus same-process child documents added by `more`); `known` says
 * which frames the caller's frame tree holds (all by default).
 */
export function domPage(
  body: Node[],
  more?: (b: SnapshotBuilder) => void,
  known: (frameId: string) => boolean = () => true,
  title = "Page title",
): DomFrame {
  const b = new SnapshotBuilder();
  b.document("F", URL0, body, title);
  more?.(b);
  const urls = new Map(b.documents.map((d) => [b.strings[d.frameId], b.strings[d.documentURL]]));
  return domFrames(b.snapshot(), (id) => known(id) ? urls.get(id) : undefined).frames.get("F")!;
}
