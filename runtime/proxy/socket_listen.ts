/**
 * The proxy's second kind of listener: a Unix socket instead of a loopback port. A browser in
 * its own network namespace (runtime/isolation/) cannot reach the host's loopback at all; it
 * reaches its session's listener through this socket, bridged into the namespace by a
 * forwarder. Each session still has a listener of its own, so the proxy knows whose request
 * it holds by the socket it arrived on, exactly as by the port before.
 *
 * The proxy process may read and write the one directory the runtime named when it started
 * it (`--allow-read=DIR --allow-write=DIR`, what Deno 2 asks of a Unix listener) and nothing
 * else of the file system.
 *
 * @module
 */
import type { ByteRateLimits } from "../../shared/mod.ts";
import type { ToProxy } from "./proxy_protocol.ts";

/** `listen` with a socket path: the listener is a Unix socket at `path` (its directory exists). */
export interface ListenOnSocket {
  op: "listen";
  listener: number;
  path: string;
  heldBodies?: ByteRateLimits;
}

/** Runtime → proxy, with the socket form of `listen`. */
export type ToProxyMessage = ToProxy | ListenOnSocket;

/** The socket path a `listen` message asks for, if any (a string, else the loopback port). */
export function socketPathOf(message: ToProxyMessage): string | undefined {
  const path = (message as Partial<ListenOnSocket>).path;
  return typeof path === "string" && path.length > 0 ? path : undefined;
}

/** Opens the listener a `listen` message asks for: the socket at its path, else a loopback port. */
export function openListener(message: ToProxyMessage): { listener: Deno.Listener; port: number } {
  const path = socketPathOf(message);
  if (path !== undefined) {
    return { listener: Deno.listen({ transport: "unix", path }) as Deno.Listener, port: 0 };
  }
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  return { listener, port: (listener.addr as Deno.NetAddr).port };
}
