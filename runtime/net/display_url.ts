/**
 * How URLs are shown to the model and in results: origin and path only, since queries and
 * fragments can carry tokens.
 *
 * @module
 */

/**
 * Shows a URL as origin+path (no query or fragment: they can carry tokens); the origin is
 * dropped when it equals the base's. Non-http(s) URLs show their scheme only.
 */
export function displayUrl(url: string, base: string | undefined): string {
  // A tab that has committed nothing yet: the headless shell reports its initial empty
  // document with no URL at all, where the full browser says about:blank.
  if (url === "") return "about:blank";
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "(invalid url)";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    return u.protocol === "about:" ? u.href.split(/[?#]/)[0] : u.protocol;
  }
  let sameOrigin = false;
  try {
    sameOrigin = base !== undefined && new URL(base).origin === u.origin;
  } catch {
    sameOrigin = false;
  }
  return sameOrigin ? u.pathname : `${u.origin}${u.pathname === "/" ? "" : u.pathname}`;
}
