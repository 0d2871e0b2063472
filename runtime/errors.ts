/**
 * Errors the runtime turns into tool results. Every one has a stable UPPER_SNAKE `code`;
 * its message is written for the model and never carries page data or secrets.
 *
 * @module
 */
import { CodedError } from "../shared/mod.ts";

/**
 * The codes of errors the runtime raises as plain {@link OmotaiError}s or the classes in this
 * file. A layer with errors of its own declares its own union beside its class (`GrantError`,
 * `TotpError`, `AgentKeyError`, `IsolationError`, ...), which derives with it.
 */
export type RuntimeErrorCode =
  // Tool calls and their arguments.
  | "INVALID_ARGUMENTS"
  | "CANCELLED"
  | "UPLOAD_NOT_ALLOWED"
  | "PASSWORD_FIELD"
  | "WAIT_TIMEOUT"
  | "ASK_TIMEOUT"
  | "SCREENSHOTS_DISABLED"
  | "SCREENSHOT_TOO_LARGE"
  | "SESSION_TAINTED"
  // Refs and tabs.
  | "STALE_REF"
  | "UNKNOWN_REF"
  | "NO_TAB"
  | "NO_SUCH_TAB"
  | "NO_HISTORY"
  | "NO_FILE_CHOOSER"
  | "NO_DIALOG"
  // The browser.
  | "BROWSER_LOST"
  | "BROWSER_ERROR"
  | "BROWSER_TIMEOUT"
  | "BROWSER_LAUNCH_FAILED"
  // The browser executable is not the pinned build, or cannot be pinned (`browser_pin.ts`).
  | "BROWSER_PIN_MISMATCH"
  | "BROWSER_PIN_SCRIPT"
  | "NAVIGATION_FAILED"
  | "SESSION_CLOSED"
  | "TARGET_CLOSED"
  | "PAGE_UNRESPONSIVE"
  // The renderer of the tab a call acted on crashed (out of memory, a page too deep to lay out).
  | "PAGE_CRASHED"
  // A tab closed for opening dialogs in a loop (`dialogs.ts`).
  | "DIALOG_LOOP"
  // A page with more text than a snapshot can carry (`scan.ts`).
  | "PAGE_TOO_LARGE"
  // No turn came for a page load on a machine busy with others (`Admission`).
  | "SERVER_BUSY"
  // One agent holds its share of this runtime's sessions (`SessionPlaces`).
  | "AGENT_BUSY"
  // Where and how the browser runs.
  | "ISOLATION_UNAVAILABLE"
  | "ISOLATION_FAILED"
  | "BROWSER_USER_INVALID"
  | "BROWSER_USER_UNKNOWN"
  // Element actions (`ElementActionError`).
  | ElementActionCode
  // Policies, their engine and the facts it reads.
  | "POLICY_INVALID"
  | "POLICY_MODULE_REJECTED"
  | "POLICY_ENGINE_FAILED"
  | "BAD_POLICY_PATH"
  | "FACTS_UNAVAILABLE"
  | "POLICY_NOT_GRANTED"
  | "BAD_ORIGIN"
  | "DOMAINS_UNREADABLE"
  // Stores, egress and serving.
  | "AUDIT_UNAVAILABLE"
  // The audit store answered and refused these rows for what they hold; it works for others.
  | "AUDIT_ROW_REFUSED"
  | "DB_UNAVAILABLE"
  | "DB_TOO_NEW"
  // A PostgreSQL role the runtime refuses to run as (row-level security would not hold).
  | "DB_ROLE_UNSAFE"
  | "BAD_TENANT"
  | "TENANT_UNKNOWN"
  | "ADMIN_TOKEN_UNSET"
  | "ADMIN_TOKEN_UNAVAILABLE"
  | "CHECKPOINT_KEY_INVALID"
  | "VAULT_UNAVAILABLE"
  | "GRANTS_UNAVAILABLE"
  | "EGRESS_PROXY_FAILED"
  | "LOGIN_UNAVAILABLE"
  | "CAPTURE_UNAVAILABLE"
  // Another capture holds a target of this one (`runtime/store/capture_lease_store.ts`).
  | "CAPTURE_IN_PROGRESS"
  | "LOGIN_CONFIG_INVALID"
  | "SECRET_NOT_FOUND"
  | "ASK_UNAVAILABLE"
  | "ASK_WITHDRAWN"
  | "SSE_CLOSED"
  | "SSE_CLOSE_FAILED"
  // Command lines and installs.
  | "BAD_OPTION"
  | "AGENT_EXISTS"
  | "ADMIN_TOKEN_WEAK"
  | "DATA_DIR_UNKNOWN"
  | "INSTALL_ROOT_UNKNOWN"
  | "INSTALL_UNEXPECTED"
  | "NOT_A_CHECKOUT"
  | "PATH_NOT_GRANTABLE"
  // `omotai eval`: an arm that would not start or answer, an agent endpoint that failed, a
  // report that would not render.
  | "EVAL_ARM_FAILED"
  | "EVAL_AGENT_FAILED"
  | "EVAL_REPORT_FAILED";

/** Why an element cannot take an action. */
export type ElementActionCode =
  | "NOT_EDITABLE"
  | "NOT_VISIBLE"
  | "NOT_CHECKABLE"
  | "NOT_A_SELECT"
  | "NOT_A_SLIDER"
  | "NOT_A_NUMBER"
  | "SINGLE_SELECT"
  | "NO_SUCH_OPTION"
  | "OPTION_DISABLED"
  | "PASSWORD_FIELD"
  | "CLICK_INTERCEPTED"
  | "CHECK_FAILED"
  | "ELEMENT_SCRIPT_FAILED";

/**
 * Base class of runtime errors that reach a tool result (the project's one base, `CodedError`,
 * which `cdp/` and `vault/` derive theirs from too). `C` is the layer's union of codes:
 * {@link RuntimeErrorCode} unless a subclass names its own; a code is checked against it,
 * never inferred from the argument.
 */
export class OmotaiError<C extends string = RuntimeErrorCode> extends CodedError<C> {
  constructor(code: NoInfer<C>, message: string, options?: ErrorOptions) {
    super(code, message, options);
  }
}

/**
 * An error's code when it carries a well-formed one (`AUDIT_UNAVAILABLE`, `ECONNRESET`, a
 * PostgreSQL SQLSTATE), else undefined. The one way to name a caught error in a log line, an
 * audit row or a status: never by its message, which could quote a page or a value.
 */
export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[A-Za-z0-9_]{1,40}$/.test(code) ? code : undefined;
}

/** Tool arguments failed validation. */
export class InvalidArgumentsError extends OmotaiError {
  constructor(message: string) {
    super("INVALID_ARGUMENTS", message);
  }
}

/** A ref that belonged to an older document of the tab. */
export class StaleRefError extends OmotaiError {
  constructor(message: string) {
    super("STALE_REF", message);
  }
}

/** A ref that was never issued in this session. */
export class UnknownRefError extends OmotaiError {
  constructor(ref: string) {
    super("UNKNOWN_REF", `ref ${ref} was never issued; take a snapshot and use one of its refs`);
  }
}

/** The browser process is gone (crashed or killed). */
export class BrowserLostError extends OmotaiError {
  constructor() {
    super(
      "BROWSER_LOST",
      "the browser process exited; this action did not run. The next call starts a fresh browser (pages and cookies are gone)",
    );
  }
}

/** The element cannot take this action (not editable, not a select, covered...). */
export class ElementActionError extends OmotaiError<ElementActionCode> {}

/** A policy file that cannot be used. */
export class PolicyFileError extends OmotaiError {
  constructor(message: string) {
    super("POLICY_INVALID", message);
  }
}
