/**
 * Origin normalization shared by the policy file, facts and the snapshot.
 *
 * @module
 */

/**
 * Normalizes an origin or URL to `scheme://host[:port]`: lowercase scheme and host,
 * default port dropped. Returns undefined for anything that is not http(s).
 */
export function normalizeOrigin(input: string): string | undefined {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  // URL already lowercases and drops default ports; `origin` excludes credentials.
  return url.origin;
}
