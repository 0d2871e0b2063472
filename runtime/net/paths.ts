/**
 * Path canonicalization for `denied_paths`: every spelling of a path that a server could
 * treat as the same resource maps to one canonical form, so `/Admin/%2e%2e/admin//x` cannot
 * slip past a rule on `/admin`.
 *
 * @module
 */

const MAX_DECODE_ROUNDS = 4;

/**
 * Canonical form of a URL path: percent-decoded until stable (double encoding included),
 * backslashes as slashes, case folded, empty segments collapsed, dot segments removed.
 * Undecodable escapes are kept literally (never an error: the caller fails closed on its own).
 */
export function canonicalPath(path: string): string {
  let p = path.split(/[?#]/)[0];
  for (let i = 0; i < MAX_DECODE_ROUNDS; i++) {
    const decoded = safeDecode(p);
    if (decoded === p) break;
    p = decoded;
  }
  p = p.replace(/\\/g, "/").toLowerCase();
  const out: string[] = [];
  for (const seg of p.split("/")) {
    // Trailing dots and spaces are dropped by some servers ("admin." == "admin").
    const s = seg.replace(/[. ]+$/, (m) => (seg === "." || seg === ".." ? m : ""));
    if (s === "" || s === ".") continue;
    if (s === "..") {
      out.pop();
      continue;
    }
    out.push(s.replace(/;.*$/, ""));
  }
  return "/" + out.filter((s) => s !== "").join("/");
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    // Decode the valid escapes one by one; leave broken ones as they are.
    return s.replace(/%[0-9a-f]{2}/gi, (m) => {
      try {
        return decodeURIComponent(m);
      } catch {
        return m;
      }
    });
  }
}
