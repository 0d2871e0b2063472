/**
 * The pipeline every tool call runs through, in one straight line: parse → resolve the
 * target once → facts → gate → audit → handle → snapshot → serialize. Nothing runs before
 * its audit row is written, every failure ends in a stable code, and a dialog or a hung
 * renderer cuts the call short instead of wedging it.
 *
 * @module
 */
import {
  type BrowserSession,
  type Interruption,
  type OpenDialog,
  runAndSettle,
} from "../browser/mod.ts";
import { log, OmotaiError } from "../mod.ts";
import { actionRow, decide, type Gate, type GateVerdict } from "../gate/mod.ts";
import type { ActionKind, Facts } from "../policy/mod.ts";
import { processRedactor, redactCut } from "../redact/mod.ts";
import { renderDialog, renderWithheldDialog } from "../snapshot/mod.ts";
import { actedRefs, answerOf } from "./answer.ts";
import { normalizeArgs } from "./arg_aliases.ts";
import { ResponseBuilder, type ToolResult } from "./response.ts";
import { type AnyTool, DEFAULT_TOOL_SETTINGS, type ToolContext, type ToolDeps } from "./tool.ts";

/** Kinds that count against `max_actions`. */
const COUNTED = new Set<ActionKind>(["navigate", "back", "click", "type", "select", "key"]);
/** Actions that load a page: admitted a few at a time across sessions (`Admission`). */
const LOADS = new Set<ActionKind>(["navigate", "back"]);
/** The tool that answers dialogs: the one action that is no progress on a tab. */
const ANSWERS_DIALOG = "browser_handle_dialog";

/**
 * What a tainted session may still call: status-only snapshots and finds (both answer with
 * the snapshot's status line), the login itself, a credential capture (status only, like a
 * login), closing, and the operator; and, with {@link TAINT_DISMISS}, dismissing a dialog.
 * Everything else (navigation, clicks, typing, tabs, page output) is refused with
 * SESSION_TAINTED until teardown.
 */
export const TAINT_ALLOWED: ReadonlySet<string> = new Set([
  "browser_snapshot",
  "browser_find",
  "browser_login",
  "browser_capture_credentials",
  "browser_close",
  "ask_human",
]);

/**
 * The one more call a tainted session may make: dismissing the open dialog, so a signed-in
 * page's `alert()` cannot wedge its tab. Only `{"accept": false}` without `promptText`:
 * accepting a confirm would act in the signed-in session blind, and a prompt's text would
 * be the model typing into the page.
 */
export const TAINT_DISMISS = "browser_handle_dialog";

/** Runs one tool call end to end; never throws. */
export async function runTool(
  tool: AnyTool,
  rawArgs: unknown,
  deps: ToolDeps,
): Promise<ToolResult> {
  const { session, gate, signal, login } = deps;
  const response = new ResponseBuilder();
  const parsed = tool.schema.safeParse(normalizeArgs(rawArgs ?? {}));
  if (!parsed.success) {
    // The model's own keys come back in the message: each redacted and cut short, and the
    // issues at most a handful.
    const message = parsed.error.issues.slice(0, 8)
      .map((i) =>
        `${i.path.length ? i.path.map((p) => redactCut(String(p), 64)).join(".") : "arguments"}: ${
          redactCut(i.message, 300)
        }`
      )
      .join("; ");
    if (!refusalRecorded(session, tool.kind, "INVALID_ARGUMENTS")) {
      return response.denied("AUDIT_UNAVAILABLE").serialize();
    }
    return response.error("INVALID_ARGUMENTS", `${tool.name}: ${message}`).serialize();
  }
  const args = parsed.data;
  if (carriesSecret(args)) {
    // The model typing a stored secret (it may have learned one from a leak elsewhere) is
    // refused whatever the field: credentials are typed by browser_login only.
    if (!refusalRecorded(session, tool.kind, "SECRET_VALUE")) {
      return response.denied("AUDIT_UNAVAILABLE").serialize();
    }
    return response.denied("SECRET_VALUE", "the arguments hold a stored secret's value")
      .serialize();
  }
  const ctx: ToolContext = { ...deps, settings: deps.settings ?? DEFAULT_TOOL_SETTINGS, response };
  return await session.exclusive(async () => {
    // The operator's startup login comes before the agent's first action, whatever it is.
    const signedIn = await login?.startup?.(session).catch(() => "startup login: LOGIN_FAILED");
    if (signedIn) response.notice(signedIn);
    // Taint first: in a tainted session nothing below may show the page, a dialog included.
    if (session.state.tainted && !runsTainted(tool, args)) {
      if (!refusalRecorded(session, tool.kind, "SESSION_TAINTED")) {
        return response.denied("AUDIT_UNAVAILABLE").serialize();
      }
      response.denied(
        "SESSION_TAINTED",
        tool.name === TAINT_DISMISS
          ? 'a credential was used in this session; a dialog may only be dismissed: browser_handle_dialog {"accept": false}, without promptText'
          : 'a credential was used in this session; until it ends only browser_snapshot and browser_find (status only), browser_login, browser_capture_credentials, browser_close and browser_handle_dialog {"accept": false} run',
      );
      return finish(session, response);
    }
    // The tab this call acts on: after the current one closed, the newest, whose page may
    // already wait on a dialog (asking it anything would hang until the CDP timeout).
    const browser = session.browserProcess;
    // A tab whose renderer crashed since the last call answers nothing: closed first.
    if (browser && !browser.hasExited) await session.guard.closeCrashed().catch(() => {});
    if (browser && !browser.hasExited) await session.currentTab().catch(() => {});
    const dialog = tool.runsBesideDialog || tool.leavesDialog
      ? undefined
      : session.guard.openDialog();
    if (dialog) {
      // The page's renderer waits on the dialog: nothing else can act on that tab.
      if (!refusalRecorded(session, tool.kind, "DIALOG_OPEN")) {
        return response.denied("AUDIT_UNAVAILABLE").serialize();
      }
      response.error("DIALOG_OPEN", "a dialog is open on the current tab; answer it first");
      response.result(dialogText(session, dialog));
      return finish(session, response);
    }
    const abandon = new AbortController();
    const watch = session.guard.watch();
    try {
      const steps = runSteps(tool, args, ctx, gate, signal, abandon.signal);
      const cut = await Promise.race([steps.then(() => undefined), watch.interrupted]);
      if (cut) {
        // The steps go on in the background until their browser call returns; they may no
        // longer touch the response or start anything new.
        abandon.abort();
        await reportInterruption(ctx, cut);
      }
    } finally {
      watch.dispose();
    }
    // A call that timed out leaves no hang behind: recovered before it returns, and the
    // agent told what the runtime did.
    const recovered = await session.recoverTimeout();
    if (recovered) {
      const line = `the browser did not answer in time; ${recovered}`;
      response.error("BROWSER_TIMEOUT", session.state.tainted ? withoutPlace(line) : line);
    }
    return finish(session, response);
  });
}

/** resolve → facts → gate → audit → handle → snapshot, filling `ctx.response`; never throws. */
async function runSteps(
  tool: AnyTool,
  args: Record<string, unknown>,
  ctx: ToolContext,
  gate: Gate,
  signal: AbortSignal | undefined,
  abandoned: AbortSignal,
): Promise<void> {
  const { session, response } = ctx;
  let target: unknown;
  let judged: Facts[];
  try {
    target = await tool.resolve?.(ctx, args);
    const facts = await tool.facts(ctx, args, target);
    judged = Array.isArray(facts) ? facts : [facts];
    if (judged.length === 0) throw new OmotaiError("FACTS_UNAVAILABLE", "nothing to judge");
  } catch (err) {
    if (abandoned.aborted) return;
    // Nothing to judge, so nothing runs; the row says why (a code, never the error text).
    const e = session.translateError(err);
    const reason = e instanceof OmotaiError ? e.code : "FACTS_UNAVAILABLE";
    if (refusalRecorded(session, tool.kind, reason)) {
      reportError(response, e, tool.name);
    } else response.denied("AUDIT_UNAVAILABLE");
    return;
  }
  let verdict: GateVerdict = { decision: "deny", reason: "GATE_ERROR" };
  let hold: GateVerdict["hold"];
  for (const facts of judged) {
    if (abandoned.aborted) return;
    verdict = await decide(gate, {
      tool: tool.name,
      kind: tool.kind,
      facts,
      session: { id: session.id, agent: session.agent },
    }, signal);
    // Recorded before anything runs: an action that cannot be audited does not run.
    if (!await kept(session, actionRow(tool.kind, facts, verdict))) {
      verdict = { decision: "deny", reason: "AUDIT_UNAVAILABLE" };
    }
    if (verdict.decision !== "allow") break;
    // One hold per action: a confirmed form submit's (WRITE_HELD) wins over a plain one.
    if (verdict.hold && (!hold || verdict.reason === "WRITE_HELD")) hold = verdict.hold;
  }
  if (verdict.decision !== "allow") {
    response.denied(verdict.reason, verdict.detail);
    return;
  }
  const act = async () => {
    // A call cut short (a dialog, an unresponsive page) while this waited starts nothing.
    if (abandoned.aborted) return;
    // Counted when it runs: a load that never got its turn used up nothing.
    if (COUNTED.has(tool.kind)) session.state.countAction();
    // Progress on the tab, before the action (a dialog it opens is the first of a chain):
    // anything that acts but answering a dialog, which a chain of them asks for and no more.
    if (COUNTED.has(tool.kind) && tool.name !== ANSWERS_DIALOG) session.guard.progress();
    if (hold) {
      await runHeld(tool, args, target, ctx, hold, abandoned);
    } else {
      try {
        await tool.handle(ctx, args, target);
      } catch (err) {
        if (!abandoned.aborted) reportError(response, session.translateError(err), tool.name);
      }
    }
    if (response.wantsSnapshot && !abandoned.aborted) {
      try {
        // Asked to read: the page's main text; a page with none gets the outline instead.
        const read = response.snapshotMode === "read" ? await session.read() : undefined;
        if (read?.article) {
          response.snapshot(read.text);
        } else {
          if (read) response.result("no readable article on this page: its outline follows");
          // After an action the agent gets its page card (what changed on a page it has
          // seen, a new page's headings and controls), or with `answer: "overview"` what
          // changed, else the page; never the page it has seen again. One place decides
          // for every tool.
          const mode = !read && answerOf(args, ctx.settings) === "card" ? "card" : "changes";
          const typed = response.typedFields;
          response.snapshot(
            (await session.snapshot(1, undefined, mode, typed, actedRefs(args))).text,
          );
        }
      } catch (err) {
        if (!response.failed && !abandoned.aborted) {
          reportError(response, session.translateError(err), tool.name);
        }
      }
    }
  };
  if (!LOADS.has(tool.kind)) return await act();
  // A load and its snapshot take every core: on a busy machine they wait their turn, and a
  // call cut short meanwhile leaves the queue.
  await session.loading(act, abandoned).catch((err) => {
    if (abandoned.aborted) return;
    // It never ran: the audit says so beside the allow it was judged with.
    const code = err instanceof OmotaiError ? err.code : "SERVER_BUSY";
    if (!refusalRecorded(session, tool.kind, code)) {
      response.denied("AUDIT_UNAVAILABLE");
      return;
    }
    reportError(response, err, tool.name);
  });
}

/**
 * Runs an action under its write hold: every write it causes is held where it leaves and
 * judged (or shown to the operator) whole. The call waits for those decisions, then for the
 * page an approved write navigated to, and says what became of each write.
 */
async function runHeld(
  tool: AnyTool,
  args: Record<string, unknown>,
  target: unknown,
  ctx: ToolContext,
  hold: NonNullable<GateVerdict["hold"]>,
  abandoned: AbortSignal,
): Promise<void> {
  const { session, response } = ctx;
  const opened = hold.open({
    signal: ctx.signal,
    confirmations: {
      used: () => session.state.counters().confirmationsUsed,
      count: () => session.state.countConfirmation(),
    },
  });
  const run = async () => {
    try {
      await tool.handle(ctx, args, target);
    } finally {
      await opened.drain();
    }
  };
  try {
    const page = await session.page().catch(() => undefined);
    // One watch over the action and the operator's answers: a navigation the held write
    // started is waited for once it is released.
    if (page) await runAndSettle(page, run);
    else await run();
  } catch (err) {
    if (!abandoned.aborted) reportError(response, session.translateError(err), tool.name);
  } finally {
    // A write arriving after the action and its answers is refused as `read_only` says.
    await opened.drain();
    opened.close();
  }
  if (abandoned.aborted) return;
  for (const o of opened.outcomes) {
    const what = `${o.method} ${o.kind === "form" ? "form" : "request"} to ${o.origin ?? "?"}`;
    if (o.decision === "allow") response.result(`the operator approved the ${what}; sent once`);
    else if (!response.failed) response.denied(o.reason, what);
  }
}

/**
 * What the model hears when a dialog or a hung renderer cut its call short. Taint is read
 * now, not when the call started: browser_login taints the session as it begins.
 */
async function reportInterruption(ctx: ToolContext, cut: Interruption): Promise<void> {
  if (cut.kind === "dialog") {
    ctx.response.result(dialogText(ctx.session, cut.dialog));
    return;
  }
  const e = cut.kind === "dialog_loop"
    ? await ctx.session.guard.loopError(cut.tabId)
    : await ctx.session.guard.recover(cut);
  ctx.response.error(e.code, ctx.session.state.tainted ? withoutPlace(e.message) : e.message);
}

/**
 * An open dialog as the model may see it. In a tainted session nothing the page chose is
 * shown (its message, its default prompt text, not even its type): a signed-in page can
 * put anything it shows into a dialog.
 */
function dialogText(session: BrowserSession, d: OpenDialog): string {
  const tabIndex = session.guard.tabIndex(d.tabId);
  if (session.state.tainted) return renderWithheldDialog(tabIndex);
  return renderDialog({ ...d, tabIndex, nonce: session.nonce });
}

/** Where a recovery says to go on: "Go on in tab N (origin/path)." ending a line. */
const GO_ON_IN = /(Go on in tab -?\d+) \([^]*\)\.$/;

/**
 * `line` without the address of the tab to go on in. In a tainted session a page's path is
 * page data like its text (a page can write anything into it; the status-only snapshot
 * shows the origin alone).
 */
function withoutPlace(line: string): string {
  return line.replace(GO_ON_IN, "$1.");
}

/**
 * Whether `tool` may run with `args` in a tainted session: a {@link TAINT_ALLOWED} tool, or
 * a dismissal of the open dialog ({@link TAINT_DISMISS}).
 */
function runsTainted(tool: AnyTool, args: Record<string, unknown>): boolean {
  if (TAINT_ALLOWED.has(tool.name)) return true;
  return tool.name === TAINT_DISMISS && args.accept === false && args.promptText === undefined;
}

/** Audits a refusal that came before any facts were read; false when it cannot be written. */
function refusalRecorded(session: BrowserSession, kind: ActionKind, reason: string): boolean {
  return recorded(session, actionRow(kind, undefined, { decision: "deny", reason }));
}

function recorded(session: BrowserSession, row: ReturnType<typeof actionRow>): boolean {
  try {
    session.audit(row);
    return true;
  } catch {
    return false;
  }
}

/** Like `recorded`, but waits until the row is kept: an action runs only after its row. */
async function kept(session: BrowserSession, row: ReturnType<typeof actionRow>): Promise<boolean> {
  try {
    await session.auditKept(row);
    return true;
  } catch {
    return false;
  }
}

function finish(session: BrowserSession, response: ResponseBuilder): ToolResult {
  const tainted = session.state.tainted;
  for (const n of session.takeNotices()) response.notice(tainted ? withoutPlace(n) : n);
  return response.serialize();
}

function reportError(response: ResponseBuilder, err: unknown, tool: string): void {
  if (err instanceof OmotaiError) {
    response.error(err.code, err.message);
    return;
  }
  // Unknown errors may carry page or argument data: log the type, tell the model only a code.
  const where = err instanceof Error ? (err.stack ?? "").split("\n").slice(1, 4).join(" ") : "";
  log(`${tool} failed: ${err instanceof Error ? err.name : typeof err} ${where}`);
  response.error("INTERNAL_ERROR", "the action failed unexpectedly");
}

/** Whether any string in the arguments holds a stored secret's value (in any encoded form). */
function carriesSecret(value: unknown, redactor = processRedactor()): boolean {
  if (redactor.empty) return false;
  if (typeof value === "string") return redactor.redact(value) !== value;
  if (Array.isArray(value)) return value.some((v) => carriesSecret(v, redactor));
  if (value && typeof value === "object") {
    return Object.values(value).some((v) => carriesSecret(v, redactor));
  }
  return false;
}
