import assert from "node:assert/strict";
import { InvalidArgumentsError } from "../errors.ts";
import { keyEvents } from "./keys.ts";

Deno.test("keyEvents() maps named keys with text where the key types", () => {
  const [down, up] = keyEvents("Enter");
  assert.equal(down.type, "keyDown");
  assert.equal(down.text, "\r");
  assert.equal(down.windowsVirtualKeyCode, 13);
  assert.equal(up.type, "keyUp");
  assert.equal(keyEvents("ArrowDown")[0].type, "rawKeyDown");
});

Deno.test("keyEvents() builds chords that hold and release modifiers", () => {
  const ev = keyEvents("Control+a");
  assert.deepEqual(ev.map((e) => `${e.type}:${e.key}:${e.modifiers}`), [
    "rawKeyDown:Control:2",
    "rawKeyDown:a:2",
    "keyUp:a:2",
    "keyUp:Control:0",
  ]);
  assert.deepEqual(ev[1].commands, ["selectAll"]);
  assert.equal(ev[1].text, undefined);
  assert.equal(keyEvents("Shift+A")[1].text, "A");
});

Deno.test("keyEvents() refuses unknown keys and modifiers", () => {
  assert.throws(() => keyEvents("Hyper+x"), InvalidArgumentsError);
  assert.throws(() => keyEvents("NotAKey"), /unknown key/);
  assert.throws(() => keyEvents(""), InvalidArgumentsError);
});
