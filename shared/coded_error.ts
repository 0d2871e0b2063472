/**
 * The one base of every coded error: `cdp/`, `vault/` and the runtime each derive their own
 * errors from it, with their own union of codes. This folder is a leaf below all of them: it
 * imports nothing, so `cdp/` and `vault/` stay leaves of the project.
 *
 * @module
 */

/** An error with a stable UPPER_SNAKE `code`; its message never carries page data or secrets. */
export class CodedError<C extends string = string> extends Error {
  /** Stable machine-readable code. */
  readonly code: C;
  constructor(code: C, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}
