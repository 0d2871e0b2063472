/**
 * Canned accessibility trees, as `Accessibility.getFullAXTree` returns them, for the
 * outline tests: a node and its subtree in one call, and a frame around a tree.
 *
 * @module
 */
import type { Protocol } from "../../cdp/mod.ts";
import type { AxFrame } from "../../runtime/snapshot/ax_outline.ts";

type AXNode = Protocol.Accessibility.AXNode;

let nextId = 1;

/** Extra fields of a node; `props` become its AX properties (`{ level: 1 }`). */
export type AxExtra = Partial<AXNode> & { props?: Record<string, unknown> };

/**
 * A node of `role` named `name` followed by its subtree (flattened, parents first), with
 * fresh node ids and a backend id of node id + 1000. Children are given as `ax()` results.
 */
export function ax(
  role: string,
  name: string,
  children: AXNode[][] = [],
  extra: AxExtra = {},
): AXNode[] {
  const id = String(nextId++);
  const kids = children.map((c) => c[0]);
  for (const k of kids) k.parentId = id;
  const { props, ...rest } = extra;
  const node: AXNode = {
    nodeId: id,
    ignored: false,
    role: { type: "role", value: role },
    name: { type: "computedString", value: name },
    childIds: kids.map((k) => k.nodeId),
    backendDOMNodeId: Number(id) + 1000,
    properties: Object.entries(props ?? {}).map(([n, v]) => ({
      name: n as Protocol.Accessibility.AXPropertyName,
      value: { type: "string", value: v },
    })),
    ...rest,
  };
  return [node, ...children.flat()];
}

/** A frame `F` at `http://127.0.0.1:8000/page` holding `nodes`; `over` replaces any field. */
export function axFrame(nodes: AXNode[], over: Partial<AxFrame> = {}): AxFrame {
  return {
    key: "F",
    url: "http://127.0.0.1:8000/page",
    nodes,
    passwordFields: new Set(),
    childFrames: new Map(),
    ...over,
  };
}
