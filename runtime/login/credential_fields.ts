/**
 * The credential fields of a tab's main document, read over CDP's DOM domain (no page
 * script runs): which inputs the runtime may type a username, a password or a one-time
 * code into. The rule is fixed, not the model's: `input[type=password]`; an input whose
 * autocomplete says `one-time-code`; an input whose autocomplete says `username` or `email`
 * only when its form also holds a password or one-time-code input; and the element the
 * operator's `username_selector` names. Hidden, disabled, read-only and boxless inputs never
 * count, and inputs in frames are never read (a cross-origin frame is another origin).
 *
 * @module
 */
import type { CdpSession, Protocol } from "../../cdp/mod.ts";
import { OmotaiError } from "../mod.ts";

/** What a field takes. */
export type CredentialKind = "username" | "password" | "otp";

/** One field the runtime may fill. */
export interface CredentialField {
  kind: CredentialKind;
  backendNodeId: number;
  /** Node id of the enclosing `<form>`, or 0 for an input outside any form. */
  form: number;
}

/** Where a form submits: its method and its action resolved against the page URL. */
export interface FormTarget {
  method: string;
  /** Absolute action URL; `null` when it does not parse. */
  action: string | null;
}

/** The main document's origin (from CDP) and its credential fields, in document order. */
export interface CredentialPage {
  origin: string;
  url: string;
  fields: CredentialField[];
  /** The forms the fields are in, by node id. */
  forms: Map<number, FormTarget>;
}

type Node = Protocol.DOM.Node;

/** Reads the credential fields of `page`'s main document. */
export async function readCredentialFields(
  page: CdpSession,
  usernameSelector?: string,
): Promise<CredentialPage> {
  const { frameTree } = await page.send("Page.getFrameTree", undefined, { timeoutMs: 5_000 });
  const url = frameTree.frame.url;
  const origin = originOf(url);
  const { root } = await page.send("DOM.getDocument", { depth: -1, pierce: false }, {
    timeoutMs: 5_000,
  });
  const inputs: { node: Node; form: number }[] = [];
  const forms = new Map<number, FormTarget>();
  const walk = (node: Node, form: number) => {
    const here = node.nodeName === "FORM" ? node.nodeId : form;
    if (node.nodeName === "FORM") {
      const a = attributes(node);
      let action: string | null = null;
      try {
        action = new URL(a.get("action") || url, url).href;
      } catch { /* an action that does not parse submits nowhere the runtime will type for */ }
      forms.set(node.nodeId, { method: (a.get("method") || "GET").toUpperCase(), action });
    }
    if (node.nodeName === "INPUT") inputs.push({ node, form: here });
    // Frames' documents are other documents (and often other origins): never entered.
    if (node.nodeName === "IFRAME" || node.nodeName === "FRAME") return;
    for (const c of node.children ?? []) walk(c, here);
  };
  walk(root, 0);
  let chosen = -1;
  if (usernameSelector) {
    try {
      const { nodeId } = await page.send("DOM.querySelector", {
        nodeId: root.nodeId,
        selector: usernameSelector,
      });
      chosen = nodeId || -1;
    } catch {
      throw new OmotaiError(
        "LOGIN_CONFIG_INVALID",
        "the policy's username_selector is not a valid selector",
      );
    }
  }
  const typed: { kind: CredentialKind | "user?"; node: Node; form: number }[] = [];
  for (const { node, form } of inputs) {
    const a = attributes(node);
    const type = (a.get("type") ?? "text").toLowerCase();
    if (type === "hidden" || a.has("disabled") || a.has("readonly")) continue;
    const auto = (a.get("autocomplete") ?? "").toLowerCase().split(/\s+/);
    let kind: CredentialKind | "user?" | undefined;
    if (type === "password") kind = "password";
    else if (auto.includes("one-time-code")) kind = "otp";
    else if (node.nodeId === chosen) kind = "username";
    else if (auto.includes("username") || auto.includes("email")) kind = "user?";
    if (kind && await visible(page, node.backendNodeId)) typed.push({ kind, node, form });
  }
  const anchors = new Set(
    typed.filter((t) => t.kind === "password" || t.kind === "otp").map((t) => t.form),
  );
  const fields: CredentialField[] = [];
  for (const t of typed) {
    if (t.kind === "user?" && !anchors.has(t.form)) continue;
    fields.push({
      kind: t.kind === "user?" ? "username" : t.kind,
      backendNodeId: t.node.backendNodeId,
      form: t.form,
    });
  }
  return { origin, url, fields, forms };
}

function attributes(node: Node): Map<string, string> {
  const out = new Map<string, string>();
  const list = node.attributes ?? [];
  for (let i = 0; i + 1 < list.length; i += 2) out.set(list[i].toLowerCase(), list[i + 1]);
  return out;
}

/** A field with a box of its own on the page (not `display:none`, not zero-sized). */
async function visible(page: CdpSession, backendNodeId: number): Promise<boolean> {
  try {
    const { model } = await page.send("DOM.getBoxModel", { backendNodeId });
    if (model.width < 2 || model.height < 2) return false;
    // Pushed off the page to the left or top (a trap for fillers): not a field anyone sees.
    const q = model.border;
    return Math.max(q[0], q[2], q[4], q[6]) > 0 && Math.max(q[1], q[3], q[5], q[7]) > 0;
  } catch {
    return false;
  }
}

function originOf(url: string): string {
  try {
    const u = new URL(url);
    return u.origin;
  } catch {
    return "null";
  }
}
