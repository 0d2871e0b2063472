/**
 * Errors the runtime turns into tool results. Every one has a stable UPPER_SNAKE `code`;
 * its message is written for the model and never carries page data or secrets.
 *
 * @module
 */
import { CodedError } from "../shared/coded_error.ts";

/**
 * Base class of runtime errors that reach a tool result (the project's one base, `CodedError`,
 * which `cdp/` and `vault/` derive theirs from too).
 */
export class OmotaiError extends CodedError {}

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
export class ElementActionError extends OmotaiError {}

/** A policy file that cannot be used. */
export class PolicyFileError extends OmotaiError {
  constructor(message: string) {
    super("POLICY_INVALID", message);
  }
}
