import assert from "node:assert/strict";
import { DataDirError, type DataDirInputs, resolveDataDir } from "./data_dir.ts";

const linux = (env: DataDirInputs["env"], flag?: string): string =>
  resolveDataDir({ flag, env, os: "linux", cwd: "/work/here" });

Deno.test("resolveDataDir() takes --data-dir first, resolved against the caller's directory", () => {
  const env = { OMOTAI_DATA_DIR: "/srv/omotai", XDG_STATE_HOME: "/x", HOME: "/home/me" };
  assert.equal(linux(env, "state"), "/work/here/state");
  assert.equal(linux(env, "/abs/dir"), "/abs/dir");
});

Deno.test("resolveDataDir() takes OMOTAI_DATA_DIR before the state directory", () => {
  assert.equal(linux({ OMOTAI_DATA_DIR: "/srv/omotai", HOME: "/home/me" }), "/srv/omotai");
  assert.equal(linux({ OMOTAI_DATA_DIR: "rel", HOME: "/home/me" }), "/work/here/rel");
  // An empty variable is an unset one, as a shell's `VAR=` means.
  assert.equal(linux({ OMOTAI_DATA_DIR: "", HOME: "/home/me" }), "/home/me/.local/state/omotai");
});

Deno.test("resolveDataDir() follows XDG on Linux: $XDG_STATE_HOME/omotai, else ~/.local/state", () => {
  assert.equal(linux({ XDG_STATE_HOME: "/st", HOME: "/home/me" }), "/st/omotai");
  assert.equal(linux({ HOME: "/home/me" }), "/home/me/.local/state/omotai");
  // The spec: a relative XDG_STATE_HOME is invalid and ignored.
  assert.equal(linux({ XDG_STATE_HOME: "st", HOME: "/home/me" }), "/home/me/.local/state/omotai");
});

Deno.test("resolveDataDir() uses the platform's own place on macOS and Windows", () => {
  assert.equal(
    resolveDataDir({ env: { HOME: "/Users/me" }, os: "darwin", cwd: "/" }),
    "/Users/me/Library/Application Support/omotai",
  );
  const win = resolveDataDir({
    env: { LOCALAPPDATA: "/c/Users/me/AppData/Local" },
    os: "windows",
    cwd: "/",
  });
  assert.match(win, /AppData[\\/]Local[\\/]omotai$/);
});

Deno.test("resolveDataDir() refuses to guess without HOME: DATA_DIR_UNKNOWN", () => {
  for (const env of [{}, { HOME: "relative" }, { XDG_STATE_HOME: "rel" }]) {
    assert.throws(
      () => linux(env),
      (e: unknown) => e instanceof DataDirError && e.code === "DATA_DIR_UNKNOWN",
    );
  }
});

Deno.test("dataDirFrom() keeps a given --data-dir as written and reads no environment for it", async () => {
  const dir = await Deno.makeTempDir();
  const probe = `${dir}/probe.ts`;
  await Deno.writeTextFile(
    probe,
    `import { dataDirFrom } from ${JSON.stringify(new URL("./data_dir.ts", import.meta.url).href)};
console.log(dataDirFrom("runs/x"));
try { dataDirFrom(undefined); } catch (e) { console.log((e as Error).name); }`,
  );
  // No permission at all: with the flag nothing is looked up; without it the lookup is refused.
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-config", "--no-prompt", probe],
    stdout: "piped",
    stderr: "piped",
  }).output();
  await Deno.remove(dir, { recursive: true });
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(text, "runs/x\nNotCapable\n", new TextDecoder().decode(out.stderr));
});
