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
  let out = "";
  let k = i + 1;
  while (k < end - 1) {
    const c = s.charCodeAt(k);
    if (c != 92) {
      out += String.fromCharCode(c);
      k++;
      continue;
    }
    const e = s.charCodeAt(k + 1);
    if (e == 110) out += "\n";
    else if (e == 116) out += "\t";
    else if (e == 114) out += "\r";
    else if (e == 98) out += "\b";
    else if (e == 102) out += "\f";
    else if (e == 117) {
      out += String.fromCharCode(<i32> parseInt(s.substring(k + 2, k + 6), 16));
      k += 4;
    } else out += String.fromCharCode(e);
    k += 2;
  }
  return out;
}

/** Index of the value of `key` in the object starting at `i`, or -1. */
export function findKey(s: string, i: i32, key: string): i32 {
  i = skipWs(s, i);
  if (i >= s.length || s.charCodeAt(i) != 123) return -1;
  i = skipWs(s, i + 1);
  while (i < s.length && s.charCodeAt(i) != 125) {
    const k = readString(s, i);
    if (k == null) return -1;
    i = skipWs(s, skipString(s, skipWs(s, i)));
    if (i >= s.length || s.charCodeAt(i) != 58) return -1;
    i = skipWs(s, i + 1);
    if (k == key) return i;
    i = skipValue(s, i);
    if (i < 0) return -1;
    i = skipWs(s, i);
    if (i < s.length && s.charCodeAt(i) == 44) i = skipWs(s, i + 1);
  }
  return -1;
}

/** Index of the value at a dotted path ("form.action_origin"), or -1. */
export function at(s: string, path: string): i32 {
  const parts = path.split(".");
  let i = 0;
  for (let p = 0; p < parts.length; p++) {
    i = findKey(s, i, parts[p]);
    if (i < 0) return -1;
  }
  return i;
}

/** Whether the value at `i` is the literal null (or missing). */
export function isNull(s: string, i: i32): bool {
  if (i < 0) return true;
  i = skipWs(s, i);
  return s.substring(i, i + 4) == "null";
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
  if (s.substring(i, i + 4) == "true") return true;
  if (s.substring(i, i + 5) == "false") return false;
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
  let out = '"';
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c == 34) out += '\\"';
    else if (c == 92) out += "\\\\";
    else if (c < 32) out += " ";
    else out += String.fromCharCode(c);
  }
  return out + '"';
}
