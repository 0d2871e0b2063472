/**
 * Type helpers that bind method and event names to their `devtools-protocol` shapes.
 *
 * @module
 */
import type { ProtocolMapping } from "devtools-protocol/types/protocol-mapping.d.ts";

export type { Protocol } from "devtools-protocol/types/protocol.d.ts";

/** Every CDP command name. */
export type CommandName = keyof ProtocolMapping.Commands;
/** Parameters of command `M`. */
export type CommandParams<M extends CommandName> = ProtocolMapping.Commands[M]["paramsType"] extends
  [] ? Record<string, never> | undefined
  : ProtocolMapping.Commands[M]["paramsType"][0];
/** Result of command `M`. */
export type CommandResult<M extends CommandName> = ProtocolMapping.Commands[M]["returnType"];
/** Every CDP event name. */
export type EventName = keyof ProtocolMapping.Events;
/** Payload of event `E`. */
export type EventParams<E extends EventName> = ProtocolMapping.Events[E] extends [infer P] ? P
  : undefined;

/** Per-call options: every wait is bounded. */
export interface CallOptions {
  /** Milliseconds before the call rejects with `CdpTimeoutError`; default 30 000. */
  timeoutMs?: number;
  /** Aborts the wait (the browser may still run the command). */
  signal?: AbortSignal;
}
