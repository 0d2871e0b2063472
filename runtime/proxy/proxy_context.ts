/**
 * What one proxy listener serves with: how it asks the runtime, reports its own refusals,
 * looks names up and terminates TLS, and the session's kept upstream connections. Types
 * only, shared by the listener's files.
 *
 * @module
 */
import type { ByteRate, ByteRateLimits } from "../../shared/mod.ts";
import type { ProxyAnswer, ProxyQuestion } from "./proxy_protocol.ts";
import type { UpstreamPool } from "./upstream_pool.ts";
import type { UpstreamWaits } from "./upstream_waits.ts";

/** Asks the runtime about a question. */
export type AskFn = (question: ProxyQuestion) => Promise<ProxyAnswer>;

/** Told of a request the proxy refused on its own, or after an allow (lookup, upstream). */
export type RefusedFn = (question: ProxyQuestion, reason: string) => void;

/** Resolves a host name; replaceable in tests. */
export type ResolveFn = (host: string) => Promise<string[]>;

/**
 * TLS termination inside CONNECT tunnels: the leaf to present for a host (minted by the
 * runtime), and extra roots for verifying upstreams (tests; production uses the system
 * roots and Deno's `DENO_CERT`).
 */
export interface TlsTermination {
  leaf(host: string): Promise<{ cert: string; key: string } | undefined>;
  upstreamCa?: string[];
}

/** How a proxy listener serves. */
export interface ServeOptions {
  /** Asks the runtime about every tunnel and request, before any lookup. */
  ask: AskFn;
  /** Reports every refusal the runtime's answer did not make (default: none heard). */
  refused?: RefusedFn;
  /** Looks a name up (default: the system's resolver, A then AAAA). */
  resolve?: ResolveFn;
  /** Without it, a CONNECT tunnel is piped through unread (judged by host and port only). */
  tls?: TlsTermination;
  /** How fast the listener's held bodies are taken in (default `HELD_BODY_RATE`). */
  heldBodies?: ByteRateLimits;
  /** Told when the listener's browser kept sending held bodies over the rate too long. */
  flooding?: () => void;
  /**
   * How long an upstream may take to start its answer (default `UPSTREAM_ANSWER_MS`, 30 s);
   * only tests of the 504 mechanism shorten it.
   */
  upstreamAnswerMs?: number;
  /** The listener's upstream waits, which the runtime may release (default: a fresh set). */
  waits?: UpstreamWaits;
}

/** A listener's serving state, handed to each connection. */
export interface ServeContext {
  ask: AskFn;
  refused: RefusedFn;
  resolve: ResolveFn;
  tls?: TlsTermination;
  pool: UpstreamPool;
  /** The listener's meter of held bodies (one browser's). */
  heldBodies: ByteRate;
  flooding: () => void;
  upstreamAnswerMs: number;
  /** The listener's requests waiting on their upstream (`upstream_waits.ts`). */
  waits: UpstreamWaits;
}
