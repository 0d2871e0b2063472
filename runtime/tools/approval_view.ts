/**
 * What a human approving a form submission is shown, read from the page when the approval
 * is created, and the fingerprint that tells whether the page changed while they decided.
 *
 * @module
 */
import type { Element } from "../browser/element_ops.ts";
import { readFormValues } from "../browser/element_info.ts";
import { OmotaiError } from "../errors.ts";
import type { ApprovalView } from "../gate/gate.ts";
import { normalizeOrigin } from "../net/origin.ts";

/**
 * The approval view of submitting `el`'s form; `typed` is text the action types into `el`
 * before it submits, shown as that field's value (a password field's never is).
 */
export async function formApprovalView(el: Element, typed?: string): Promise<ApprovalView> {
  const form = await readFormValues(el);
  if (!form) throw new OmotaiError("CONFIRM_UNAVAILABLE", "there is no form to show");
  // The document the form lives in: a new one (navigation, reload) is another approval.
  const { frameTree } = await el.page.send("Page.getFrameTree", undefined, { timeoutMs: 5_000 });
  const details = {
    method: form.method,
    url: form.action,
    origin: normalizeOrigin(frameTree.frame.url) ?? "unknown",
    fields: form.fields.map(({ name, type, value, self }) => ({
      name,
      value: self && typed !== undefined ? (type === "password" ? "[redacted]" : typed) : value,
    })),
  };
  const fingerprint = JSON.stringify([frameTree.frame.loaderId, el.frameId, form]);
  return { details, fingerprint };
}
