/**
 * A secret's forms computed with the platform's own encoders, independently of
 * `runtime/redact/secret_forms.ts`: what `omotai eval` searches an arm's output for, and what
 * the redaction tests expect the redactor to catch.
 *
 * @module
 */

/** The UTF-8 bytes of `s`. */
export const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Standard padded base64 of `bytes`. */
export function b64(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** Lower-case hex of `bytes`. */
export function hex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** `parts` one after the other. */
export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** Every form of `value`, computed here with the platform's own encoders where it has one. */
export function expectedForms(value: string): Record<string, string> {
  const bytes = utf8(value);
  const std = b64(bytes);
  const uri = encodeURIComponent(value);
  const form = new URLSearchParams({ v: value }).toString().slice(2);
  const lower = (s: string) => s.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
  const cps = [...value].map((c) => c.codePointAt(0)!);
  return {
    raw: value,
    reversed: [...value].reverse().join(""),
    encodeURIComponent: uri,
    encodeURIComponentLower: lower(uri),
    formUrlencoded: form,
    formUrlencodedLower: lower(form),
    encodeURI: encodeURI(value),
    htmlNamed: value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;").replace(/'/g, "&#39;"),
    htmlDecimalAll: cps.map((c) => `&#${c};`).join(""),
    htmlHexAll: cps.map((c) => `&#x${c.toString(16).toUpperCase()};`).join(""),
    htmlDecimalSpecial: [...value].map((c) => `&<>"'`.includes(c) ? `&#${c.codePointAt(0)};` : c)
      .join(""),
    base64: std,
    base64Unpadded: std.replace(/=+$/, ""),
    base64Url: std.replace(/\+/g, "-").replace(/\//g, "_"),
    base64UrlUnpadded: std.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""),
    hexLower: hex(bytes),
    hexUpper: hex(bytes).toUpperCase(),
    json: JSON.stringify(value).slice(1, -1),
  };
}
