// A small JSON reader for policy modules: finds values by key path in the facts text without
// building a tree. Malformed input yields "not found", which every rule treats as deny.

/** Index after the whitespace at `i`. */
export function skipWs(s: string, i: i32): i32 {
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c != 32 && c != 9 && c != 10 && c != 13) break;
    i++;
  }
  return i;
}

/** Index just after the JSON value starting at `i`, or -1 if malformed. */
export function skipValue(s: string, i: i32): i32 {
  i = skipWs(s, i);
  if (i >= s.length) return -1;
  const c = s.charCodeAt(i);
  if (c == 34) return skipString(s, i);
  if (c == 123 || c == 91) {
    const close: i32 = c == 123 ? 125 : 93;
    i = skipWs(s, i + 1);
    if (i < s.length && s.charCodeAt(i) == close) return i + 1;
    while (i < s.length) {
      if (c == 123) {
        i = skipString(s, skipWs(s, i));
        if (i < 0) return -1;
        i = skipWs(s, i);
        if (i >= s.length || s.charCodeAt(i) != 58) return -1;
        i++;
      }
      i = skipValue(s, i);
      if (i < 0) return -1;
      i = skipWs(s, i);
      if (i >= s.length) return -1;
      const d = s.charCodeAt(i);
      if (d == close) return i + 1;
      if (d != 44) return -1;
      i++;
    }
    return -1;
  }
  // number, true, false, null
  let j = i;
  while (j < s.length) {
    const d = s.charCodeAt(j);
    if (d == 44 || d == 125 || d == 93 || d == 32 || d == 9 || d == 10 || d == 13) break;
    j++;
  }
  return j > i ? j : -1;
}

function skipString(s: string, i: i32): i32 {
  if (i < 0 || i >= s.length || s.charCodeAt(i) != 34) return -1;
  i++;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c == 92) {
      i += 2;
      continue;
    }
    if (c == 34) return i + 1;
    i++;
  }
  return -1;
}

/** Decodes the JSON string starting at `i`; null if it is not a string. */
export function readString(s: string, i: i32): string | null {
  i = skipWs(s, i);
  const end = skipString(s, i);
  if (end < 0) return null;
  // Facts strings rarely hold escapes: one substring instead of a string per character.
  let escaped = false;
  for (let k = i + 1; k < end - 1; k++) {
    if (s.charCodeAt(k) == 92) {
      escaped = true;
      break;
    }
  }
  if (!escaped) return s.substring(i + 1, end - 1);
  const codes: i32[] = [];
  let k = i + 1;
  while (k < end - 1) {
    const c = s.charCodeAt(k);
    if (c != 92) {
      codes.push(c);
      k++;
      continue;
    }
    const e = s.charCodeAt(k + 1);
    if (e == 110) codes.push(10);
    else if (e == 116) codes.push(9);
    else if (e == 114) codes.push(13);
    else if (e == 98) codes.push(8);
    else if (e == 102) codes.push(12);
    else if (e == 117) {
      codes.push(<i32> parseInt(s.substring(k + 2, k + 6), 16));
      k += 4;
    } else codes.push(e);
    k += 2;
  }
  return String.fromCharCodes(codes);
}

/**
 * Whether the JSON string token at `i` (ending before `end`) spells `key[from, to)`,
 * compared in place; a token with escapes is decoded first.
 */
function keyIs(s: string, i: i32, end: i32, key: string, from: i32, to: i32): bool {
  const n = end - i - 2;
  for (let k = 0; k < n; k++) {
    if (s.charCodeAt(i + 1 + k) == 92) {
      const decoded = readString(s, i);
      return decoded != null && decoded == key.substring(from, to);
    }
  }
  if (n != to - from) return false;
  for (let k = 0; k < n; k++) {
    if (s.charCodeAt(i + 1 + k) != key.charCodeAt(from + k)) return false;
  }
  return true;
}

/** Index of the value of `key[from, to)` in the object starting at `i`, or -1. */
function findKeyIn(s: string, i: i32, key: string, from: i32, to: i32): i32 {
  i = skipWs(s, i);
  if (i >= s.length || s.charCodeAt(i) != 123) return -1;
  i = skipWs(s, i + 1);
  while (i < s.length && s.charCodeAt(i) != 125) {
    const keyEnd = skipString(s, i);
    if (keyEnd < 0) return -1;
    const match = keyIs(s, i, keyEnd, key, from, to);
    i = skipWs(s, keyEnd);
    if (i >= s.length || s.charCodeAt(i) != 58) return -1;
    i = skipWs(s, i + 1);
    if (match) return i;
    i = skipValue(s, i);
    if (i < 0) return -1;
    i = skipWs(s, i);
    if (i < s.length && s.charCodeAt(i) == 44) i = skipWs(s, i + 1);
  }
  return -1;
}

/** Index of the value of `key` in the object starting at `i`, or -1. */
export function findKey(s: string, i: i32, key: string): i32 {
  return findKeyIn(s, i, key, 0, key.length);
}

/** Index of the value at a dotted path ("form.action_origin"), or -1. */
export function at(s: string, path: string): i32 {
  let i = 0;
  let from = 0;
  while (i >= 0) {
    let to = path.indexOf(".", from);
    if (to < 0) to = path.length;
    i = findKeyIn(s, i, path, from, to);
    if (to == path.length) break;
    from = to + 1;
  }
  return i;
}

/** Whether `word` is spelled at `i`. */
function spells(s: string, i: i32, word: string): bool {
  if (i + word.length > s.length) return false;
  for (let k = 0; k < word.length; k++) {
    if (s.charCodeAt(i + k) != word.charCodeAt(k)) return false;
  }
  return true;
}

/** Whether the value at `i` is the literal null (or missing). */
export function isNull(s: string, i: i32): bool {
  if (i < 0) return true;
  return spells(s, skipWs(s, i), "null");
}

/** The string at a path, or null. */
export function str(s: string, path: string): string | null {
  const i = at(s, path);
  return i < 0 ? null : readString(s, i);
}

/** The boolean at a path; `fallback` when missing or not a boolean. */
export function bool_(s: string, path: string, fallback: bool): bool {
  const i = at(s, path);
  if (i < 0) return fallback;
  if (spells(s, i, "true")) return true;
  if (spells(s, i, "false")) return false;
  return fallback;
}

/** The number at a path; `fallback` when missing. */
export function num(s: string, path: string, fallback: f64): f64 {
  const i = at(s, path);
  if (i < 0) return fallback;
  const end = skipValue(s, i);
  if (end < 0) return fallback;
  const v = parseFloat(s.substring(i, end));
  return isNaN(v) ? fallback : v;
}

/** Start indexes of the items of the array at `i` (empty if not an array). */
export function items(s: string, i: i32): i32[] {
  const out: i32[] = [];
  if (i < 0) return out;
  i = skipWs(s, i);
  if (i >= s.length || s.charCodeAt(i) != 91) return out;
  i = skipWs(s, i + 1);
  while (i < s.length && s.charCodeAt(i) != 93) {
    out.push(i);
    i = skipValue(s, i);
    if (i < 0) return [];
    i = skipWs(s, i);
    if (i < s.length && s.charCodeAt(i) == 44) i = skipWs(s, i + 1);
  }
  return out;
}

/** The strings of the array at a path. */
export function strings(s: string, path: string): string[] {
  const out: string[] = [];
  const idx = items(s, at(s, path));
  for (let k = 0; k < idx.length; k++) {
    const v = readString(s, idx[k]);
    if (v != null) out.push(v);
  }
  return out;
}

/** Escapes a string for JSON output. */
export function quote(v: string): string {
  let plain = true;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c == 34 || c == 92 || c < 32) {
      plain = false;
      break;
    }
  }
  if (plain) return '"' + v + '"';
  const codes: i32[] = [34];
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c == 34 || c == 92) {
      codes.push(92);
      codes.push(c);
    } else codes.push(c < 32 ? 32 : c);
  }
  codes.push(34);
  return String.fromCharCodes(codes);
}
