/**
 * Host names as URLs and Host headers spell them.
 *
 * @module
 */

/** Puts an IPv6 literal in brackets (`::1` → `[::1]`); other hosts stay as they are. */
export function bracketHost(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}
