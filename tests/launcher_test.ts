/**
 * The `omotai` command end to end: the launcher run as the task and the install run it,
 * from directories that are not the checkout, and the runtime it starts granted what the
 * command line names and refused the rest.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { compiledFlags } from "../runtime/launcher/compile.ts";
import { launcherFlags, localFacts } from "../runtime/launcher/launcher.ts";
import { childPermissions, type LaunchFacts } from "../runtime/launcher/permissions.ts";
import { parsePolicy } from "../runtime/policy/policy_file.ts";
import { serveFixtureSite } from "./fixtures/site.ts";
import { eventually, keyedTransport, TestClient } from "./helpers/harness.ts";
import { spawnServing } from "./helpers/omotai_cli.ts";

const CHECKOUT = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const MAIN = join(CHECKOUT, "runtime", "main.ts");

/** `omotai ARGS` as the task runs it: the launcher's flags on runtime/main.ts. */
function omotaiArgs(args: string[]): string[] {
  return ["run", ...launcherFlags(Deno.execPath()), MAIN, ...args];
}

/** An MCP client over `omotai ARGS` spawned in `cwd` with `env` (and nothing else). */
async function stdioClient(args: string[], cwd: string, env: Record<string, string>) {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: omotaiArgs(args),
    cwd,
    env: { PATH: "/usr/bin:/bin", HOME: Deno.env.get("HOME") ?? "/root", ...env },
    stderr: "pipe",
  });
  const client = new Client({ name: "launcher-test", version: "0" });
  await client.connect(transport);
  return new TestClient(client);
}

/** Copies a bundled module and its signature to `dir` (a module named by a relative path). */
async function copyModule(name: string, dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  for (const suffix of [".wasm", ".wasm.sig.json"]) {
    await Deno.copyFile(
      `${CHECKOUT}/policies-wasm/dist/${name}${suffix}`,
      `${dir}/${name}${suffix}`,
    );
  }
}

Deno.test("launch() runs start from / with a policy outside the checkout, data in the state dir", async () => {
  await using site = serveFixtureSite();
  const home = await Deno.makeTempDir({ prefix: "omotai-home-" });
  try {
    // The issue's own case: a policy in the user's home, the client started from elsewhere.
    const policy = `${home}/p.yaml`;
    await Deno.writeTextFile(policy, `allowed_origins: [${site.origin}]\n`);
    const c = await stdioClient(["start", "--policy", policy], "/", {
      XDG_STATE_HOME: `${home}/state`,
    });
    try {
      const r = await c.call("browser_navigate", { url: `${site.origin}/` });
      assert.equal(r.isError, false, r.text);
      assert.match(r.text, /# Fixture home/);
    } finally {
      await c[Symbol.asyncDispose]();
    }
    const info = await Deno.stat(`${home}/state/omotai`);
    assert.equal(info.mode! & 0o777, 0o700);
    assert.ok((await Deno.stat(`${home}/state/omotai/omotai.db`)).isFile);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("launch() resolves relative paths against the caller's directory, modules against the policy", async () => {
  await using site = serveFixtureSite();
  const work = await Deno.makeTempDir({ prefix: "omotai-work-" });
  try {
    await copyModule("baseline", `${work}/conf/mods`);
    await Deno.writeTextFile(
      `${work}/conf/p.yaml`,
      `allowed_origins: [${site.origin}]\nmodules:\n  - path: mods/baseline.wasm\n`,
    );
    const c = await stdioClient(
      ["start", "--policy", "conf/p.yaml", "--data-dir", "data"],
      work,
      {},
    );
    try {
      const r = await c.call("browser_navigate", { url: `${site.origin}/` });
      assert.match(r.text, /# Fixture home/, r.text);
      const denied = await c.call("browser_navigate", { url: `${site.otherOrigin}/` });
      assert.match(denied.text, /^denied: ORIGIN_NOT_ALLOWED/);
    } finally {
      await c[Symbol.asyncDispose]();
    }
    assert.ok((await Deno.stat(`${work}/data/omotai.db`)).isFile, "the data dir is the caller's");
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("childPermissions() flags let the runtime read what is named and refuse the rest", async () => {
  const work = await Deno.makeTempDir({ prefix: "omotai-probe-" });
  try {
    await copyModule("baseline", `${work}/mods`);
    await Deno.mkdir(`${work}/uploads`);
    await Deno.writeTextFile(`${work}/uploads/a.txt`, "a");
    await Deno.writeTextFile(`${work}/secret.txt`, "not for the runtime");
    await Deno.writeTextFile(
      `${work}/p.yaml`,
      `upload_dir: ${work}/uploads\nmodules:\n  - path: mods/baseline.wasm\n`,
    );
    const plan = childPermissions(
      ["start", "--policy", `${work}/p.yaml`, "--data-dir", `${work}/data`],
      { ...localFacts(), cwd: work },
    );
    // The runtime's flags, on a probe that tries what a compromised runtime might.
    const probe = `${work}/probe.ts`;
    await Deno.writeTextFile(
      probe,
      `const tries: [string, () => unknown][] = [
  ["read policy", () => Deno.readTextFileSync("${work}/p.yaml")],
  ["read module", () => Deno.readFileSync("${work}/mods/baseline.wasm")],
  ["read upload", () => Deno.readTextFileSync("${work}/uploads/a.txt")],
  ["write data", () => { Deno.mkdirSync("${work}/data", { recursive: true }); Deno.writeTextFileSync("${work}/data/x", "x"); }],
  ["read secret", () => Deno.readTextFileSync("${work}/secret.txt")],
  ["write policy", () => Deno.writeTextFileSync("${work}/p.yaml", "x")],
  ["read checkout", () => Deno.readTextFileSync("${CHECKOUT}/deno.json")],
  ["env HOME", () => Deno.env.get("HOME")],
  ["run sh", () => new Deno.Command("/bin/sh", { args: ["-c", "exit 0"] }).outputSync()],
  ["run bash", () => new Deno.Command("/bin/bash").outputSync()],
  ["listen", () => Deno.listen({ hostname: "127.0.0.1", port: 0 }).close()],
];
for (const [what, run] of tries) {
  try { run(); console.log("ok", what); } catch (e) { console.log((e as Error).name, what); }
}`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", "--no-config", ...plan.flags, probe],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.deepEqual(new TextDecoder().decode(out.stdout).trim().split("\n"), [
      "ok read policy",
      "ok read module",
      "ok read upload",
      "ok write data",
      "NotCapable read secret",
      "NotCapable write policy",
      "NotCapable read checkout",
      "NotCapable env HOME",
      // The one shell granted for what Deno keeps behind --allow-all (cgroupfs, /proc/<pid>);
      // no other program.
      "ok run sh",
      "NotCapable run bash",
      "NotCapable listen",
    ]);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("launch() grants sse mode the policy of an agent added from another directory", async () => {
  await using site = serveFixtureSite();
  const work = await Deno.makeTempDir({ prefix: "omotai-agent-" });
  const addAgent = async (name: string, dir: string) => {
    await Deno.mkdir(`${work}/${dir}`);
    await Deno.writeTextFile(`${work}/${dir}/agent.yaml`, `allowed_origins: [${site.origin}]\n`);
    const add = await new Deno.Command(Deno.execPath(), {
      args: omotaiArgs(["agent", "add", name, "--policy", "agent.yaml", "--data-dir", `${work}/d`]),
      cwd: `${work}/${dir}`,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(add.code, 0, new TextDecoder().decode(add.stderr));
    return new TextDecoder().decode(add.stdout).trim().split("\n").at(-1)!;
  };
  try {
    // The runtime's own policy allows nothing; the agent's allows the fixture site.
    const key = await addAgent("bot", "elsewhere");
    const rt = await spawnServing(
      new Deno.Command(Deno.execPath(), {
        // No warm browser: the one session would take it and the pool launch another for nothing.
        args: omotaiArgs([
          "start",
          "--mode",
          "sse",
          "--port",
          "0",
          "--warm-browsers",
          "0",
          "--data-dir",
          `${work}/d`,
        ]),
        cwd: "/",
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }),
    );
    const { child, url } = rt;
    try {
      const client = new Client({ name: "launcher-agent-test", version: "0" });
      await client.connect(keyedTransport(url, key));
      await using c = new TestClient(client);
      const r = await c.call("browser_navigate", { url: `${site.origin}/` });
      assert.match(r.text, /# Fixture home/, r.text);
      // An agent added after the start: its policy was never granted, and the log says so.
      const lateKey = await addAgent("late", "later");
      const late = new Client({ name: "launcher-late-agent", version: "0" });
      await assert.rejects(() => late.connect(keyedTransport(url, lateKey)));
      assert.ok(
        await eventually(() =>
          /agent late: POLICY_NOT_GRANTED: .*later\/agent\.yaml.*restart/.test(rt.stderr())
        ),
        rt.stderr(),
      );
    } finally {
      child.kill("SIGTERM");
      assert.equal((await child.status).code, 0, "SIGTERM passed on, clean exit");
    }
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});

Deno.test("launch() stops before the runtime when OMOTAI_BROWSER names no file", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: omotaiArgs(["start"]),
    cwd: "/",
    env: { OMOTAI_BROWSER: "/nonexistent/chromium", OMOTAI_DATA_DIR: "/nonexistent/data" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 1);
  assert.match(
    new TextDecoder().decode(out.stderr),
    /^omotai: BROWSER_LAUNCH_FAILED: OMOTAI_BROWSER/,
  );
  assert.equal(new TextDecoder().decode(out.stdout), "", "stdout is MCP's alone");
});

Deno.test("launch() permissions prints the runtime's flags and runs nothing", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: omotaiArgs(["permissions", "domain", "list", "--data-dir", "/tmp/omotai-nowhere"]),
    cwd: "/",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  assert.match(
    text,
    /^runtime: .* --allow-read=\/tmp\/omotai-nowhere --allow-write=\/tmp\/omotai-nowhere /m,
  );
  assert.equal(await Deno.stat("/tmp/omotai-nowhere").catch(() => null), null, "nothing was run");
});

/** The backquoted flags of the row of `process` in docs/install.md's permissions table. */
function tableFlags(doc: string, process: string): string[] {
  const row = doc.split("\n").find((l) => l.startsWith(`| ${process} `));
  assert.ok(row, `a row for ${process}`);
  return [...row.split("|")[2].matchAll(/`(--[^`]+)`/g)].map((m) => m[1]);
}

Deno.test("childPermissions() and launcherFlags() give exactly docs/install.md's example table", async () => {
  const doc = await Deno.readTextFile(`${CHECKOUT}/docs/install.md`);
  const section = doc.slice(doc.indexOf("## Permissions of each process"));
  const command = section.match(/```sh\nomotai (.+)\n```/)![1].split(" ");
  const yaml = section.match(/```yaml\n([\s\S]+?)```/)![1];
  const facts: LaunchFacts = {
    cwd: "/somewhere/else",
    os: "linux",
    deno: "<deno>",
    bundledDir: "<checkout>/policies-wasm/dist",
    policiesDir: "<checkout>/policies-wasm",
    env: { HOME: "/home/you" },
    readPolicy: (path) =>
      path === "/home/you/omotai-policy.yaml" ? parsePolicy(yaml, path) : undefined,
    agentPolicies: () => [],
    browser: ({ headful, preferFull }) =>
      headful || preferFull ? "/usr/bin/chromium" : "/usr/lib/chromium/chromium-headless-shell",
    realPath: (p) => p,
  };
  assert.deepEqual(tableFlags(section, "launcher (`omotai`)"), launcherFlags("<deno>"));
  assert.deepEqual(tableFlags(section, "runtime"), childPermissions(command, facts).flags);
  // The proxy's flags live in runtime/egress/egress_proxy.ts: network and nothing else.
  const proxySource = await Deno.readTextFile(`${CHECKOUT}/runtime/egress/egress_proxy.ts`);
  assert.deepEqual([...new Set(proxySource.match(/"--allow-[a-z-]+"/g))], ['"--allow-net"']);
  assert.deepEqual(tableFlags(section, "egress proxy"), ["--allow-net"]);
  // And the compiled binary's baked set.
  const baked = doc.match(/```text\n(--no-prompt .+)\n```/)![1].split(" ");
  const expected = compiledFlags("<binary>", "<OMOTAI_BROWSER-at-build>");
  assert.deepEqual(baked, expected);
});

Deno.test("launcherFlags() are the omotai task's, and install and compile are tasks", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${CHECKOUT}/deno.json`));
  const words = (task: string) =>
    (config.tasks[task] as string).replaceAll("$OMOTAI_DENO", Deno.execPath()).split(/\s+/);
  assert.deepEqual(
    words("omotai").filter((w) => w.startsWith("--allow-")),
    launcherFlags(Deno.execPath()),
  );
  assert.ok(words("install").includes("runtime/launcher/install.ts"));
  assert.ok(words("compile").includes("runtime/launcher/compile.ts"));
  for (const task of ["omotai", "start", "install", "compile"]) {
    assert.ok(!words(task).includes("-A"), task);
  }
});
