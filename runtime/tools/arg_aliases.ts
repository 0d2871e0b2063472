/**
 * Argument names of newer Playwright MCP releases, accepted beside ours. Playwright MCP
 * 0.0.83 names an element `target` (`startTarget`/`endTarget` for a drag) where earlier
 * releases and Omotai say `ref`; prompts and agents written for either keep working. Only
 * the name changes: the value is parsed and checked by the tool's own schema.
 *
 * @module
 */

const RENAMES: Readonly<Record<string, string>> = {
  target: "ref",
  startTarget: "startRef",
  endTarget: "endRef",
};

/** `raw` with aliased keys renamed (also inside `fields` of a form); anything else as is. */
export function normalizeArgs(raw: unknown): unknown {
  if (!isRecord(raw)) return raw;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    const name = RENAMES[key] ?? key;
    // Both spellings at once: keep both, so the strict schema refuses the call.
    out[name in out || (name !== key && name in raw) ? key : name] = value;
  }
  if (Array.isArray(out.fields)) out.fields = out.fields.map(normalizeArgs);
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
