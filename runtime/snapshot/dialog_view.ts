/**
 * How an open dialog is shown to the model: a runtime line saying what is open and how to
 * answer, and the dialog's own text (page content) inside an untrusted block.
 *
 * @module
 */
import { untrustedBlock } from "./untrusted.ts";

/** An open dialog as the view needs it. */
export interface DialogView {
  type: string;
  message: string;
  defaultPrompt: string;
  tabIndex: number;
  nonce: string;
}

/** The lines that describe an open dialog. */
export function renderDialog(d: DialogView): string {
  const answer = d.type === "prompt"
    ? 'browser_handle_dialog {"accept": true, "promptText": "..."} or {"accept": false}'
    : d.type === "beforeunload"
    ? 'browser_handle_dialog {"accept": true} to leave the page or {"accept": false} to stay'
    : 'browser_handle_dialog {"accept": true} or {"accept": false}';
  const lines = [`message: ${JSON.stringify(d.message)}`];
  if (d.type === "prompt" && d.defaultPrompt) {
    lines.push(`default: ${JSON.stringify(d.defaultPrompt)}`);
  }
  return [
    `dialog open: ${d.type} on tab ${d.tabIndex}; answer with ${answer}`,
    untrustedBlock("dialog", d.nonce, lines),
  ].join("\n");
}
