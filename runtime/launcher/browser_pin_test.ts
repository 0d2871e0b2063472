import assert from "node:assert/strict";
import { OmotaiError } from "../errors.ts";
import { BrowserPin, fileSha256 } from "./browser_pin.ts";

/** `sha256sum FILE`'s hash: a second implementation to hold ours against. */
async function sha256sum(path: string): Promise<string> {
  const out = await new Deno.Command("sha256sum", { args: [path], stdout: "piped" }).output();
  return new TextDecoder().decode(out.stdout).split(/\s/)[0];
}

function code(err: unknown): string | undefined {
  return err instanceof OmotaiError ? err.code : undefined;
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "omotai-pin-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A stand-in binary (an ELF header and some bytes): not a script. */
async function binary(path: string, body: string): Promise<void> {
  const bytes = new Uint8Array([0x7f, 0x45, 0x4c, 0x46, ...new TextEncoder().encode(body)]);
  await Deno.writeFile(path, bytes, { mode: 0o755 });
}

Deno.test("fileSha256() agrees with sha256sum, on a file larger than one read", async () => {
  await withDir(async (dir) => {
    const big = `${dir}/big`;
    await Deno.writeFile(big, crypto.getRandomValues(new Uint8Array(65_536)).map((b, i) => b ^ i));
    await Deno.writeFile(big, new Uint8Array(3_000_000).fill(7), { append: true });
    assert.equal(await fileSha256(big), await sha256sum(big));
  });
});

Deno.test("BrowserPin.open(): nothing pinned is no pin; the pinned build passes through a symlink, any case", async () => {
  await withDir(async (dir) => {
    await binary(`${dir}/chrome`, "build 1");
    await Deno.symlink(`${dir}/chrome`, `${dir}/browser`);
    assert.equal(await BrowserPin.open(`${dir}/browser`, []), undefined);
    const hash = await sha256sum(`${dir}/chrome`);
    const pin = await BrowserPin.open(`${dir}/browser`, [
      { sha256: hash.toUpperCase(), from: "--browser-sha256" },
      { sha256: hash, from: "browser_sha256 of p.yaml" },
    ]);
    assert.ok(pin);
    await pin.check();
  });
});

Deno.test("BrowserPin.open(): another build is refused with BROWSER_PIN_MISMATCH, naming the hash to pin and the pin's source", async () => {
  await withDir(async (dir) => {
    await binary(`${dir}/chrome`, "build 2");
    const actual = await sha256sum(`${dir}/chrome`);
    const pinned = "ab".repeat(32);
    await assert.rejects(
      BrowserPin.open(`${dir}/chrome`, [{ sha256: pinned, from: "browser_sha256 of p.yaml" }]),
      (err: unknown) => {
        assert.equal(code(err), "BROWSER_PIN_MISMATCH");
        const message = (err as Error).message;
        assert.ok(message.includes(`has SHA-256 ${actual}`), message);
        assert.ok(message.includes(`pin ${actual}`), message);
        assert.ok(message.includes(`not ${pinned} as browser_sha256 of p.yaml pins`), message);
        return true;
      },
    );
    // Two pins that disagree cannot both hold: the one that does not is named.
    await assert.rejects(
      BrowserPin.open(`${dir}/chrome`, [
        { sha256: actual, from: "--browser-sha256" },
        { sha256: pinned, from: "browser_sha256 of p.yaml" },
      ]),
      (err: unknown) => code(err) === "BROWSER_PIN_MISMATCH" && /of p\.yaml/.test(String(err)),
    );
  });
});

Deno.test("BrowserPin.open(): a script is refused (its hash would not pin the browser it runs); a malformed pin is BAD_OPTION", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/wrapper`, "#!/bin/sh\nexec /usr/lib/chromium/chromium\n");
    const hash = await sha256sum(`${dir}/wrapper`);
    await assert.rejects(
      BrowserPin.open(`${dir}/wrapper`, [{ sha256: hash, from: "--browser-sha256" }]),
      (err: unknown) => code(err) === "BROWSER_PIN_SCRIPT",
    );
    await binary(`${dir}/chrome`, "x");
    for (const bad of ["", "abc", "g".repeat(64), "a".repeat(63), "a".repeat(65)]) {
      await assert.rejects(
        BrowserPin.open(`${dir}/chrome`, [{ sha256: bad, from: "--browser-sha256" }]),
        (err: unknown) => code(err) === "BAD_OPTION",
        bad,
      );
    }
  });
});

Deno.test("BrowserPin.check(): a file replaced under a running runtime (an upgrade) is refused at the next launch, and stays refused", async () => {
  await withDir(async (dir) => {
    await binary(`${dir}/chrome`, "build 1");
    const pin = await BrowserPin.open(`${dir}/chrome`, [
      { sha256: await sha256sum(`${dir}/chrome`), from: "--browser-sha256" },
    ]);
    // What a package upgrade does: a new file renamed over the old one.
    await binary(`${dir}/chrome.new`, "build 2");
    await Deno.rename(`${dir}/chrome.new`, `${dir}/chrome`);
    await assert.rejects(pin!.check(), (err: unknown) => code(err) === "BROWSER_PIN_MISMATCH");
    await assert.rejects(pin!.check(), (err: unknown) => code(err) === "BROWSER_PIN_MISMATCH");
    // The pinned build back (written in place): accepted again.
    await binary(`${dir}/chrome`, "build 1");
    await pin!.check();
    // A symlink pointed elsewhere is the other file's hash that counts.
    await binary(`${dir}/good`, "build 1");
    await Deno.remove(`${dir}/chrome`);
    await Deno.symlink(`${dir}/good`, `${dir}/chrome`);
    await pin!.check();
  });
});
