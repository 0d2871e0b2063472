/**
 * A pinned browser: `omotai start --browser-sha256 HEX` (or `browser_sha256:` in the
 * runtime's own policy) makes the runtime refuse a browser executable whose SHA-256 is not
 * the one pinned (`BROWSER_PIN_MISMATCH`, with the hash to pin if that build is to be
 * trusted), at the start before any browser is launched, and again before each launch when
 * the file is no longer the one hashed.
 *
 * What is hashed: the file the runtime executes, its symlinks resolved. That must be the
 * browser's own binary. A script (Debian's `/usr/bin/chromium` is a shell wrapper that
 * sources `/etc/chromium.d/*` and runs `/usr/lib/chromium/chromium`) is refused
 * (`BROWSER_PIN_SCRIPT`): its hash would pin the wrapper, not the browser it starts. Point
 * `OMOTAI_BROWSER` at the binary instead (the headless shell, the default, is one). The pin
 * covers that file, not the libraries and resources beside it; pin the package's version
 * too (the Dockerfile does).
 *
 * Each launch looks at the file again (a `stat`: device, inode, size, modification and
 * change time) and re-hashes only when it changed: a package upgrade under a running runtime
 * replaces the file, and the next launch then refuses a build that is not the pinned one.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { OmotaiError } from "../mod.ts";

/** A SHA-256 as the pin takes it: 64 hex digits. */
export const SHA256_HEX = /^[0-9a-f]{64}$/;

/** One pin and where it was given (named in the refusal). */
export interface PinSource {
  sha256: string;
  /** `--browser-sha256`, or the policy file's path and key. */
  from: string;
}

/** How a file looked when it was hashed. */
interface FileIdentity {
  path: string;
  dev: number;
  ino: number | null;
  size: number;
  mtime: number | undefined;
  ctime: number | undefined;
}

/** The pinned browser of one runtime. */
export class BrowserPin {
  readonly #executable: string;
  readonly #pins: readonly PinSource[];
  #hashed: FileIdentity | undefined;

  private constructor(executable: string, pins: readonly PinSource[]) {
    this.#executable = executable;
    this.#pins = pins;
  }

  /**
   * Checks `executable` against `pins` now; resolves to the pin to check before each launch,
   * or undefined when nothing is pinned. Throws `BAD_OPTION` for a pin that is not a SHA-256,
   * `BROWSER_PIN_SCRIPT` for a script, `BROWSER_PIN_MISMATCH` for another build.
   */
  static async open(
    executable: string,
    pins: readonly PinSource[],
  ): Promise<BrowserPin | undefined> {
    if (pins.length === 0) return undefined;
    const normalized = pins.map((p) => ({ ...p, sha256: p.sha256.trim().toLowerCase() }));
    for (const p of normalized) {
      if (!SHA256_HEX.test(p.sha256)) {
        throw new OmotaiError(
          "BAD_OPTION",
          `${p.from} must be a SHA-256 of 64 hex digits, not "${p.sha256}"`,
        );
      }
    }
    const pin = new BrowserPin(executable, normalized);
    await pin.check();
    return pin;
  }

  /** Refuses the browser unless the file it would run now is the pinned build. */
  async check(): Promise<void> {
    const now = await identify(this.#executable);
    if (this.#hashed && same(this.#hashed, now)) return;
    const sha256 = await fileSha256(now.path);
    const wrong = this.#pins.find((p) => p.sha256 !== sha256);
    if (wrong) {
      // A file that once matched and changed is refused from here on, not remembered as good.
      this.#hashed = undefined;
      throw new OmotaiError(
        "BROWSER_PIN_MISMATCH",
        `the browser ${now.path}${
          now.path === this.#executable ? "" : ` (${this.#executable})`
        } has SHA-256 ${sha256}, not ${wrong.sha256} as ${wrong.from} pins; if this build is the one to trust, pin ${sha256}`,
      );
    }
    this.#hashed = now;
  }
}

/** The real file behind `executable`, and how it looks; a script is refused. */
async function identify(executable: string): Promise<FileIdentity> {
  const path = await Deno.realPath(executable);
  const info = await Deno.stat(path);
  if (!info.isFile) {
    throw new OmotaiError("BROWSER_PIN_MISMATCH", `the browser ${path} is not a file`);
  }
  using file = await Deno.open(path);
  const head = new Uint8Array(2);
  const n = await file.read(head);
  if (n === 2 && head[0] === 0x23 && head[1] === 0x21) {
    throw new OmotaiError(
      "BROWSER_PIN_SCRIPT",
      `the browser ${path} is a script: its hash would not pin the browser it starts; set OMOTAI_BROWSER to the browser's binary (Debian: /usr/lib/chromium/chromium-headless-shell, or /usr/lib/chromium/chromium for a window)`,
    );
  }
  return {
    path,
    dev: info.dev,
    ino: info.ino,
    size: info.size,
    mtime: info.mtime?.getTime(),
    ctime: info.ctime?.getTime(),
  };
}

function same(a: FileIdentity, b: FileIdentity): boolean {
  return a.path === b.path && a.dev === b.dev && a.ino === b.ino && a.size === b.size &&
    a.mtime === b.mtime && a.ctime === b.ctime;
}

/** The SHA-256 of the file at `path`, hex (node:crypto, read in chunks). */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  // The stream closes the file when it ends or fails.
  const file = await Deno.open(path);
  for await (const chunk of file.readable) hash.update(chunk);
  return hash.digest("hex");
}
