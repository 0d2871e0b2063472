/**
 * Typed errors of the CDP layer. Each carries a stable UPPER_SNAKE `code` so callers can
 * map them to deny reasons without parsing messages.
 *
 * @module
 */

import { CodedError } from "../shared/mod.ts";

/** Every stable code a {@link CdpLayerError} may carry. */
export type CdpErrorCode =
  | "CDP_PROTOCOL_ERROR"
  | "CDP_TIMEOUT"
  | "CDP_CLOSED"
  | "CDP_ABORTED"
  | "BROWSER_LAUNCH_FAILED"
  | CdpFaultCode;

/** Base class of every error thrown by `cdp/` (the project's one base, `CodedError`). */
export class CdpLayerError<C extends CdpErrorCode = CdpErrorCode> extends CodedError<C> {}

/** The browser answered a command with a protocol error. */
export class CdpError extends CdpLayerError {
  /** The CDP method that failed. */
  readonly method: string;
  /** The numeric protocol error code Chromium returned. */
  readonly protocolCode: number;
  constructor(method: string, protocolCode: number, message: string) {
    super("CDP_PROTOCOL_ERROR", `${method}: ${message}`);
    this.method = method;
    this.protocolCode = protocolCode;
  }
}

/** A command or wait did not finish in time. */
export class CdpTimeoutError extends CdpLayerError {
  constructor(what: string, ms: number) {
    super("CDP_TIMEOUT", `${what} timed out after ${ms} ms`);
  }
}

/** The pipe closed (browser exited or was killed) while something was pending. */
export class CdpClosedError extends CdpLayerError {
  constructor(what = "CDP connection") {
    super("CDP_CLOSED", `${what} closed: the browser is gone`);
  }
}

/** The wait was aborted through its AbortSignal. */
export class CdpAbortedError extends CdpLayerError {
  constructor(what: string) {
    super("CDP_ABORTED", `${what} was aborted`);
  }
}

/** No usable browser executable was found or it could not be started. */
export class BrowserLaunchError extends CdpLayerError {
  constructor(message: string, options?: ErrorOptions) {
    super("BROWSER_LAUNCH_FAILED", message, options);
  }
}

/** Why the runtime itself ended a browser's connection. */
export type CdpFaultCode =
  /** A message over the transport's cap (`MAX_MESSAGE_BYTES`). */
  | "CDP_MESSAGE_TOO_LARGE"
  /** A message that is not UTF-8 JSON of the protocol's shape. */
  | "CDP_MESSAGE_MALFORMED"
  /** The runtime's own handling of the browser's messages or events failed. */
  | "CDP_LISTENER_FAILED"
  /**
   * The browser's CDP messages, or the request bodies the egress proxy holds for it, came
   * faster than the runtime's byte-rate cap for longer than it allows, slowed all along.
   */
  | "SESSION_FLOODING";

/**
 * The connection was ended by the runtime: a message it could not take, or its own handler
 * failing on one. The browser behind it is killed; pending calls reject with this error.
 * Only this browser is affected: nothing of it reaches another connection.
 */
export class CdpFaultError extends CdpLayerError<CdpFaultCode> {}
