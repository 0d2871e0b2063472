/**
 * The README's Quick start sets a fresh Debian box up with its own two lines, and `.ci/run` sets
 * the CI box up the same way: the packages of the README's `apt-get install` line are
 * `.ci/run`'s `PACKAGES`, and both make the browser's user with the command `deno task
 * install` runs (`browserUserCommand()`).
 *
 * @module
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { browserUserCommand } from "../runtime/launcher/install.ts";

const CHECKOUT = fileURLToPath(new URL("..", import.meta.url));

/** The packages of the first `apt-get install` line of a shell text (its options left out). */
export function aptPackages(text: string): string[] {
  for (const line of text.split("\n")) {
    const m = line.match(/\bapt-get install\s+(.*)$/);
    if (!m) continue;
    // The line's command ends at a comment or at the next command.
    const words = m[1].replace(/\s#.*$/, "").split(/\s*(?:&&|;|\|)\s*/)[0].split(/\s+/);
    return words.filter((w) => w !== "" && !w.startsWith("-"));
  }
  throw new Error("no apt-get install line");
}

/** The packages of `.ci/run`'s `PACKAGES=(…)` array. */
export function ciPackages(script: string): string[] {
  const m = script.match(/^PACKAGES=\(([^)]*)\)$/m);
  if (!m) throw new Error("no PACKAGES=(...) line");
  return m[1].trim().split(/\s+/);
}

/** The README's fenced `sh` blocks' text. */
function shBlocks(markdown: string): string {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]).join("\n");
}

/** The packages one list names and the other does not, both ways. */
function difference(a: string[], b: string[]): { onlyFirst: string[]; onlySecond: string[] } {
  return {
    onlyFirst: a.filter((p) => !b.includes(p)),
    onlySecond: b.filter((p) => !a.includes(p)),
  };
}

Deno.test("aptPackages() reads a line's packages without its options, comment or next command", () => {
  assert.deepEqual(
    aptPackages("apt-get update && apt-get install -y -qq a b-c   # why\nnext"),
    ["a", "b-c"],
  );
  assert.deepEqual(aptPackages("sudo apt-get install x y && useradd z"), ["x", "y"]);
  assert.throws(() => aptPackages("apt-get update"), /no apt-get install line/);
});

Deno.test("ciPackages() reads .ci/run's array, and a difference in either list is named", () => {
  assert.deepEqual(ciPackages("x=1\nPACKAGES=(a b  c)\n"), ["a", "b", "c"]);
  assert.deepEqual(difference(["a", "b"], ["b", "c"]), { onlyFirst: ["a"], onlySecond: ["c"] });
});

Deno.test("the README's install line names the packages .ci/run installs, and both make the browser's user alike", async () => {
  const readme = await Deno.readTextFile(`${CHECKOUT}/README.md`);
  const ci = await Deno.readTextFile(`${CHECKOUT}/.ci/run`);
  const fromReadme = aptPackages(shBlocks(readme));
  const fromCi = ciPackages(ci);
  assert.deepEqual(
    difference(fromReadme, fromCi),
    { onlyFirst: [], onlySecond: [] },
    "README's apt-get line vs .ci/run's PACKAGES",
  );
  // What the runtime and the tests cannot do without (tests/helpers/postgres.ts, the
  // load-balancer test, runtime/isolation/).
  for (const p of ["chromium-headless-shell", "bubblewrap", "socat", "postgresql", "haproxy"]) {
    assert.ok(fromReadme.includes(p), p);
  }
  const useradd = browserUserCommand().join(" ");
  assert.ok(shBlocks(readme).split("\n").includes(useradd), `README: ${useradd}`);
  assert.ok(ci.split("\n").some((l) => l.trim() === useradd), `.ci/run: ${useradd}`);
  // What a root runtime without that user does is said where the user is made.
  assert.match(
    readme.replaceAll(/\s+/g, " "),
    /without this user runs every browser as root with Chromium's sandbox off/,
  );
});
