/**
 * Which addresses are private: loopback, RFC 1918, link-local, CGNAT, unique-local,
 * unspecified, multicast and IPv4-mapped forms of those. A request to one, by literal or
 * by a DNS answer, needs its exact origin allowed.
 *
 * @module
 */

/** Whether `host` (an IP literal, bracketed or not, or a name) is private or local. */
export function isPrivateHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  const v4 = parseIpv4(h);
  if (v4) return isPrivateIpv4(v4);
  if (h.includes(":")) return isPrivateIpv6(h);
  return false;
}

/** Whether `host` is an IP literal (v4 or v6). */
export function isIpLiteral(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "");
  return parseIpv4(h) !== undefined || h.includes(":");
}

function parseIpv4(h: string): number[] | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : undefined;
}

function isPrivateIpv4([a, b]: number[]): boolean {
  return a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) ||
    (a === 100 && b >= 64 && b <= 127) || a >= 224;
}

function isPrivateIpv6(h: string): boolean {
  const mapped = /^(?:0*:)*:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h) ??
    /^::(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  if (mapped) {
    const v4 = parseIpv4(mapped[1]);
    return v4 ? isPrivateIpv4(v4) : true;
  }
  const groups = expandIpv6(h);
  if (!groups) return true; // unparseable: treat as private, the exact-origin rule applies
  if (groups.every((g) => g === 0)) return true; // ::
  if (groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1) return true; // ::1
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return isPrivateIpv4([groups[6] >> 8, groups[6] & 255]);
  }
  const first = groups[0];
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00;
}

function expandIpv6(h: string): number[] | undefined {
  const parts = h.split("::");
  if (parts.length > 2) return undefined;
  const head = parts[0] ? parts[0].split(":") : [];
  const tail = parts.length === 2 && parts[1] ? parts[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (parts.length === 1 && missing !== 0) return undefined;
  if (missing < 0) return undefined;
  const all = [...head, ...Array(parts.length === 2 ? missing : 0).fill("0"), ...tail];
  const nums = all.map((g) => /^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN);
  return nums.some(Number.isNaN) ? undefined : nums;
}
