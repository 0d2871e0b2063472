/**
 * How an open dialog is shown to the model: a runtime line saying what is open and how to
 * answer, and the dialog's own text (page content) inside an untrusted block; in a tainted
 * session, the runtime line alone.
 *
 * @module
 */
import { quote } from "./line_escape.ts";
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
  const lines = [`message: ${quote(d.message)}`];
  if (d.type === "prompt" && d.defaultPrompt) {
    lines.push(`default: ${quote(d.defaultPrompt)}`);
  }
  return [
    `dialog open: ${d.type} on tab ${d.tabIndex}; answer with ${answer}`,
    untrustedBlock("dialog", d.nonce, lines),
  ].join("\n");
}

/**
 * The line for a dialog open in a tainted session: where it is and how to dismiss it, and
 * nothing the page chose. Not its message or default prompt text (a signed-in page can put
 * anything it shows there), and not its type either, which the page picks too.
 */
export function renderWithheldDialog(tabIndex: number): string {
  return `dialog open on tab ${tabIndex}; its text is not shown: this session is tainted ` +
    `(a credential was used). Dismiss it with browser_handle_dialog {"accept": false}`;
}
