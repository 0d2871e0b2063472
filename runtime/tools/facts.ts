/**
 * The facts of each kind of agent action, read from the browser (never from the model's
 * words, except the URL it asks to open, which is parsed and normalized here). Tools name
 * the builder they need beside their handler.
 *
 * @module
 */
import type { CdpSession, Protocol } from "../../cdp/mod.ts";
import {
  type Element,
  type ElementInfo,
  keyEvents,
  type OpenDialog,
  readElementInfo,
  readFocusedField,
  readFocusedInfo,
} from "../browser/mod.ts";
import { InvalidArgumentsError, OmotaiError } from "../mod.ts";
import { actionRow } from "../gate/mod.ts";
import { normalizeOrigin } from "../net/mod.ts";
import { type ActionKind, baseFacts, type Facts, targetOf } from "../policy/mod.ts";
import type { ToolContext } from "./tool.ts";

/** Fields listed in form facts at most. */
const MAX_FIELDS = 200;

/** The current tab's page session and main frame. */
async function mainFrame(
  ctx: ToolContext,
): Promise<{ page: CdpSession; frame: Protocol.Page.Frame }> {
  const page = await ctx.session.page();
  const { frameTree } = await page.send("Page.getFrameTree");
  return { page, frame: frameTree.frame };
}

function start(ctx: ToolContext, kind: ActionKind, pageUrl: string): Facts {
  const facts = baseFacts(kind, ctx.session.state.counters());
  facts.frame = { top: true, origin: normalizeOrigin(pageUrl) ?? null };
  return facts;
}

/** Facts of an action that stays on the current page (snapshot, wait, tabs). */
export async function pageFacts(ctx: ToolContext, kind: ActionKind): Promise<Facts> {
  return start(ctx, kind, (await mainFrame(ctx)).frame.url);
}

/**
 * Facts of a tab action (list, select, close, resize): it does not touch the page, so the
 * page's origin is the tab's as Chromium last reported it (a renderer waiting on a dialog
 * is never asked).
 */
export async function tabFacts(ctx: ToolContext): Promise<Facts> {
  return start(ctx, "tab", (await ctx.session.currentTab()).info.url);
}

/** Facts of opening `url` in the current tab. */
export async function navigateFacts(ctx: ToolContext, url: string): Promise<Facts> {
  const target = targetOf(url);
  if (!target) throw new InvalidArgumentsError(`"${url.slice(0, 200)}" is not an absolute URL`);
  // A tab waiting on a dialog (the navigation will answer it) is not asked: its URL is the
  // one Chromium last reported, as for tab actions.
  const tab = await ctx.session.currentTab();
  const from = ctx.session.guard.dialogs.openOn(tab.info.targetId)
    ? tab.info.url
    : (await mainFrame(ctx)).frame.url;
  const facts = start(ctx, "navigate", from);
  return { ...facts, target, resource_type: "document" };
}

/** Facts of going back: judged as opening the previous entry (or staying, without one). */
export async function backFacts(ctx: ToolContext): Promise<Facts> {
  const { page, frame } = await mainFrame(ctx);
  const h = await page.send("Page.getNavigationHistory");
  const prev = h.currentIndex > 0 ? h.entries[h.currentIndex - 1] : undefined;
  // The blank page a tab starts on is not somewhere to go back to (see goBack()).
  const hasPrevious = prev && !(h.currentIndex === 1 && prev.url === "about:blank");
  const facts = start(ctx, "back", frame.url);
  return {
    ...facts,
    target: targetOf(hasPrevious ? prev.url : frame.url),
    resource_type: "document",
  };
}

/**
 * Facts of clicking, typing into or selecting in `el`; `submits` for typing with Enter.
 * Typing into a password field is refused here (`PASSWORD_FIELD`) unless the policy opts
 * in: its type is a fact read now, not when the ref was taken.
 */
export async function elementFacts(
  ctx: ToolContext,
  kind: "click" | "type" | "select",
  el: Element,
  typeSubmits = false,
): Promise<Facts> {
  const info = await readElementInfo(el);
  if (kind === "type" && info.password && !ctx.settings.modelMayTypePasswords) {
    throw passwordField(`${el.ref} is a password field`);
  }
  const link = targetOf(info.href);
  const facts = start(ctx, kind, el.mainFrame.url);
  facts.frame = {
    top: el.session === el.page && el.frameId === el.mainFrame.id,
    origin: normalizeOrigin(info.frameOrigin) ?? null,
  };
  facts.element = {
    tag: info.tag,
    type: info.type,
    role: info.role,
    link_scheme: link?.scheme ?? null,
    link_origin: link?.origin ?? null,
    link_path: link?.path ?? null,
  };
  if (info.form) {
    const submits = kind === "click" ? info.submitter : kind === "type" ? typeSubmits : false;
    facts.form = formFacts(info.form, submits);
    if (submits) facts.method = facts.form.method;
  }
  if (!facts.form && link && kind === "click") facts.target = link;
  return facts;
}

/**
 * Facts of pressing `key`. Enter may submit the form of the focused element: read it in the
 * main frame. Focus inside a child frame cannot be inspected here, so it counts as
 * submitting a form to an unknown destination (which no policy allows).
 */
export async function keyFacts(ctx: ToolContext, key: string): Promise<Facts> {
  await refuseKeyIntoPassword(ctx, key);
  const { page, frame } = await mainFrame(ctx);
  const facts = start(ctx, "key", frame.url);
  if (!/(^|\+)Enter$/.test(key)) return facts;
  const info = await readFocusedInfo(page, frame.id);
  if (!info || info.isFrame) {
    facts.form = {
      method: "POST",
      action_origin: null,
      action_path: null,
      submits: true,
      fields: [],
    };
    return facts;
  }
  if (info.form && info.enterSubmits) {
    facts.form = formFacts(info.form, true);
    facts.method = info.form.method;
  }
  return facts;
}

/**
 * Whether pressing `key` may put text into the focused field: a character (Space included),
 * or any chord with Control, Alt or Meta (paste, undo and the like). Enter, Tab, Escape,
 * Backspace, Delete, arrows, Home, End, PageUp, PageDown and F-keys, alone or with Shift,
 * type nothing of the model's.
 */
export function keyMayType(key: string): boolean {
  const modifierKeys = ["Alt", "Control", "Meta", "Shift"];
  const down = keyEvents(key).find((e) =>
    e.type !== "keyUp" && !modifierKeys.includes(e.key ?? "")
  );
  if (!down) return true;
  if ((down.modifiers ?? 0) & (1 | 2 | 4)) return true;
  return down.text !== undefined && down.key !== "Enter";
}

/**
 * Refuses a key that may type (see {@link keyMayType}) while the focus is on a password
 * field, or somewhere the runtime cannot read (a cross-site frame), unless the policy opts
 * in. Run for the facts and again just before the key is sent: the page may move the focus.
 */
export async function refuseKeyIntoPassword(ctx: ToolContext, key: string): Promise<void> {
  if (ctx.settings.modelMayTypePasswords || !keyMayType(key)) return;
  const { page, frame } = await mainFrame(ctx);
  const focused = await readFocusedField(page, frame.id);
  if (focused === "password") throw passwordField("the focused element is a password field");
  if (focused === "unknown") {
    throw passwordField(
      "the focus is in a frame the runtime cannot read, so it may be a password field; type into a field by ref with browser_type",
    );
  }
}

/**
 * Refuses a drop onto a password field (`PASSWORD_FIELD`) unless the policy opts in: a drag
 * of selected text inserts it there as typing would.
 */
export async function refuseDropOnPassword(ctx: ToolContext, el: Element): Promise<void> {
  if (ctx.settings.modelMayTypePasswords) return;
  if ((await readElementInfo(el)).password) {
    throw passwordField(`${el.ref} is a password field (a drop onto it types)`);
  }
}

/** `PASSWORD_FIELD`: the model's text would land in a password field. */
function passwordField(what: string): OmotaiError {
  return new OmotaiError(
    "PASSWORD_FIELD",
    `${what}: the model does not type passwords (browser_login signs in with granted ` +
      "credentials; the policy's model_may_type_passwords allows it, for sign-ups); nothing was typed",
  );
}

/**
 * Rethrows `err`, auditing it first as a deny when it is a `PASSWORD_FIELD` refusal met at
 * action time, after the facts were judged and allowed (a field that turned into a password
 * field as it took the focus, focus that moved onto one). A refusal whose row cannot be
 * written becomes `AUDIT_UNAVAILABLE`.
 */
export function rethrowAudited(ctx: ToolContext, kind: ActionKind, err: unknown): never {
  if (!(err instanceof OmotaiError) || err.code !== "PASSWORD_FIELD") throw err;
  try {
    ctx.session.audit(actionRow(kind, undefined, { decision: "deny", reason: err.code }));
  } catch {
    throw new OmotaiError("AUDIT_UNAVAILABLE", "the refusal could not be audited");
  }
  throw err;
}

function formFacts(
  form: NonNullable<ElementInfo["form"]>,
  submits: boolean,
): NonNullable<Facts["form"]> {
  const action = targetOf(form.action);
  return {
    method: form.method,
    action_origin: action?.origin ?? null,
    action_path: action?.path ?? null,
    submits,
    fields: form.fields.slice(0, MAX_FIELDS),
  };
}

/**
 * Facts of answering a dialog. Accepting a `beforeunload` lets the page go: a navigation,
 * judged on the page being left (where it goes was judged when the navigation started, and
 * its request is judged by the egress guard). Answering a prompt types text into the page.
 * Anything else is a click on the page's own button: what the page's script does next
 * (a fetch, a form post) is judged as its own request.
 */
export function dialogFacts(ctx: ToolContext, d: OpenDialog, accept: boolean): Facts {
  const kind = accept && d.type === "beforeunload"
    ? "navigate"
    : accept && d.type === "prompt"
    ? "type"
    : "click";
  const facts = start(ctx, kind, d.url);
  facts.frame.top = d.session.targetInfo?.type !== "iframe";
  if (kind === "navigate") return { ...facts, target: targetOf(d.url), resource_type: "document" };
  facts.element = {
    tag: "dialog",
    type: d.type,
    role: "button",
    link_scheme: null,
    link_origin: null,
    link_path: null,
  };
  return facts;
}
