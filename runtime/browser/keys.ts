/**
 * Key names (Playwright's spelling: "Enter", "ArrowDown", "Control+a") turned into CDP
 * `Input.dispatchKeyEvent` parameters.
 *
 * @module
 */
import type { Protocol } from "../../cdp/mod.ts";
import { InvalidArgumentsError } from "../mod.ts";

interface KeyDef {
  key: string;
  code: string;
  keyCode: number;
  text?: string;
}

const NAMED: Record<string, KeyDef> = {
  Enter: { key: "Enter", code: "Enter", keyCode: 13, text: "\r" },
  Tab: { key: "Tab", code: "Tab", keyCode: 9 },
  Escape: { key: "Escape", code: "Escape", keyCode: 27 },
  Backspace: { key: "Backspace", code: "Backspace", keyCode: 8 },
  Delete: { key: "Delete", code: "Delete", keyCode: 46 },
  Space: { key: " ", code: "Space", keyCode: 32, text: " " },
  ArrowUp: { key: "ArrowUp", code: "ArrowUp", keyCode: 38 },
  ArrowDown: { key: "ArrowDown", code: "ArrowDown", keyCode: 40 },
  ArrowLeft: { key: "ArrowLeft", code: "ArrowLeft", keyCode: 37 },
  ArrowRight: { key: "ArrowRight", code: "ArrowRight", keyCode: 39 },
  Home: { key: "Home", code: "Home", keyCode: 36 },
  End: { key: "End", code: "End", keyCode: 35 },
  PageUp: { key: "PageUp", code: "PageUp", keyCode: 33 },
  PageDown: { key: "PageDown", code: "PageDown", keyCode: 34 },
};
for (let i = 1; i <= 12; i++) NAMED[`F${i}`] = { key: `F${i}`, code: `F${i}`, keyCode: 111 + i };

const MODIFIERS: Record<string, { bit: number; def: KeyDef }> = {
  Alt: { bit: 1, def: { key: "Alt", code: "AltLeft", keyCode: 18 } },
  Control: { bit: 2, def: { key: "Control", code: "ControlLeft", keyCode: 17 } },
  Meta: { bit: 4, def: { key: "Meta", code: "MetaLeft", keyCode: 91 } },
  Shift: { bit: 8, def: { key: "Shift", code: "ShiftLeft", keyCode: 16 } },
};

type KeyEvent = Protocol.Input.DispatchKeyEventRequest;

/** The keyDown/keyUp events for a key or chord; throws `InvalidArgumentsError` if unknown. */
export function keyEvents(spec: string): KeyEvent[] {
  const parts = spec === "+" ? ["+"] : spec.split("+").filter((p) => p !== "");
  if (parts.length === 0) throw new InvalidArgumentsError("key must not be empty");
  const mainName = parts.pop()!;
  const mods = parts.map((m) => {
    const mod = MODIFIERS[m];
    if (!mod) throw new InvalidArgumentsError(`unknown modifier "${m}" in key "${spec}"`);
    return mod;
  });
  const main = resolveKey(mainName, spec);
  const modifiers = mods.reduce((acc, m) => acc | m.bit, 0);
  const events: KeyEvent[] = [];
  let held = 0;
  for (const m of mods) {
    held |= m.bit;
    events.push({ type: "rawKeyDown", ...defFields(m.def), modifiers: held });
  }
  // With Control/Alt/Meta held, a printable key is a shortcut and must not insert text.
  const text = modifiers & ~8 ? undefined : main.text;
  const down: KeyEvent = {
    type: text ? "keyDown" : "rawKeyDown",
    ...defFields(main),
    modifiers,
    ...(text ? { text, unmodifiedText: text } : {}),
  };
  if (modifiers === 2 && main.key.toLowerCase() === "a") down.commands = ["selectAll"];
  events.push(down, { type: "keyUp", ...defFields(main), modifiers });
  for (const m of [...mods].reverse()) {
    held &= ~m.bit;
    events.push({ type: "keyUp", ...defFields(m.def), modifiers: held });
  }
  return events;
}

function defFields(d: KeyDef) {
  return { key: d.key, code: d.code, windowsVirtualKeyCode: d.keyCode };
}

function resolveKey(name: string, spec: string): KeyDef {
  const named = NAMED[name];
  if (named) return named;
  if ([...name].length === 1) {
    const upper = name.toUpperCase();
    const isLetter = /^[a-z]$/i.test(name);
    const isDigit = /^[0-9]$/.test(name);
    return {
      key: name,
      code: isLetter ? `Key${upper}` : isDigit ? `Digit${name}` : "",
      keyCode: isLetter || isDigit ? upper.charCodeAt(0) : 0,
      text: name,
    };
  }
  throw new InvalidArgumentsError(
    `unknown key "${spec}"; use a single character or one of ${Object.keys(NAMED).join(", ")}`,
  );
}
