/**
 * A planted password and a redactor that holds it, for the unit tests of every place that
 * shortens page text (redaction must come before the cut).
 *
 * @module
 */
import { Redactor } from "../../runtime/redact/mod.ts";

/** A planted password (24 letters and digits). */
export const PLANTED_PW = "Zk4Wq9Rt2Xm7Pv3Lh8Ns5Jd6";

/** A redactor that holds {@link PLANTED_PW}. */
export function plantedRedactor(): Redactor {
  const r = new Redactor();
  r.add(PLANTED_PW);
  return r;
}

/** Whether `text` (letters and digits, lower-cased) holds 3 consecutive characters of it. */
export function holdsPiece(text: string): boolean {
  const t = text.toLowerCase().replace(/[^a-z0-9]/g, "");
  const s = PLANTED_PW.toLowerCase();
  for (let i = 0; i + 3 <= s.length; i++) if (t.includes(s.slice(i, i + 3))) return true;
  return false;
}
