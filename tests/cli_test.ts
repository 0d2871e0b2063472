import assert from "node:assert/strict";
import { findBrowser } from "../cdp/mod.ts";
import { BASELINE_SIG, baselineWasm } from "./helpers/policies.ts";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { parseStartOptions } from "../runtime/cli/cli.ts";
import { startRuntime } from "../runtime/cli/start.ts";
import { serveFixtureSite } from "./fixtures/site.ts";
import {
  connectStdio,
  keyedTransport,
  refOf,
  runtimeCommand,
  startHarness,
  TestClient,
} from "./helpers/harness.ts";
import { launcherFlags } from "../runtime/launcher/launcher.ts";

/**
 * The `deno run` permission flags of a task in deno.json, with `$OMOTAI_DENO` replaced by
 * this Deno's path as the task's shell does (the launcher re-runs it for the runtime).
 */
async function taskFlags(task: string): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile("deno.json"));
  const words: string[] = config.tasks[task].replaceAll("$OMOTAI_DENO", Deno.execPath())
    .split(/\s+/);
  return words.filter((w) => w.startsWith("--allow-") || w === "-A");
}

/** The words of a task after `runtime/main.ts` (its command line for omotai). */
async function taskArgs(task: string): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile("deno.json"));
  const words: string[] = config.tasks[task].split(/\s+/);
  return words.slice(words.indexOf("runtime/main.ts") + 1);
}

Deno.test("launcherFlags() are the start and omotai tasks' flags, never -A", async () => {
  for (const task of ["start", "omotai"]) {
    // Read (the policy may be anywhere), a few variables, and Deno: no write, net or sys.
    assert.deepEqual(await taskFlags(task), launcherFlags(Deno.execPath()), task);
  }
});

Deno.test("childPermissions() of the start task: read of runs/, the demo policy and the bundled modules", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...await taskFlags("start"),
      "runtime/main.ts",
      "permissions",
      ...await taskArgs("start"),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const runtime = text.split("\n").find((l) => l.startsWith("runtime:"))!.split(" ");
  const flag = (kind: string) => runtime.find((w) => w.startsWith(`--allow-${kind}=`));
  const cwd = Deno.cwd();
  assert.equal(
    flag("read"),
    // Then what finds out whether the browser can have a network namespace, and its user.
    `--allow-read=${cwd}/runs,${cwd}/policies-wasm/dist,${cwd}/runtime/demo/demo_policy.yaml,` +
      // `nice`, to start browsers below the runtime's priority.
      "/usr/bin/nice,/etc/passwd,/usr/bin/bwrap,/usr/bin/socat,/usr/bin/setpriv",
  );
  assert.equal(flag("write"), `--allow-write=${cwd}/runs`);
  assert.equal(flag("net"), "--allow-net=127.0.0.1:8080,127.0.0.1:8081");
  assert.equal(
    flag("run"),
    // The browser this machine has (the headless shell when installed).
    `--allow-run=${findBrowser(Deno.env.get("OMOTAI_BROWSER"))
      // The shell reaching /proc and cgroupfs (Deno wants --allow-all for either).
    },${Deno.execPath()},/usr/bin/nice,/bin/sh,/usr/bin/bwrap`,
  );
  assert.match(text, /^browser isolation: each browser in a network namespace of its own/m);
  assert.ok(!runtime.includes("-A") && !runtime.includes("--allow-all"));
});

Deno.test("childPermissions() of the start task refuse a read its command line did not name", async () => {
  // The runtime's flags for the task's command line, run on a probe instead of the runtime.
  const plan = runtimeCommand(await taskArgs("start"));
  const probe = await Deno.makeTempFile({ suffix: ".ts" });
  await Deno.writeTextFile(
    probe,
    `for (const p of ["runtime/demo/demo_policy.yaml", "/etc/hostname", "deno.json"]) {
  try { Deno.readTextFileSync(p); console.log("read", p); } catch (e) { console.log((e as Error).name, p); }
}
try { Deno.writeTextFileSync("runtime/x.txt", "x"); } catch (e) { console.log((e as Error).name, "write"); }`,
  );
  const args = plan.args.slice(0, plan.args.indexOf(`${Deno.cwd()}/runtime/cli/main.ts`));
  const out = await new Deno.Command(Deno.execPath(), {
    args: [...args, probe],
    stdout: "piped",
    stderr: "piped",
  }).output();
  await Deno.remove(probe);
  assert.equal(
    new TextDecoder().decode(out.stdout),
    "read runtime/demo/demo_policy.yaml\nNotCapable /etc/hostname\nNotCapable deno.json\n" +
      "NotCapable write\n",
    new TextDecoder().decode(out.stderr),
  );
});

Deno.test("deno task start serves the demo site and MCP at the printed URL", async () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "start"],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let banner = "";
  const deadline = Date.now() + 20_000;
  while (!banner.includes("Press Ctrl+C") && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    banner += value;
  }
  try {
    assert.match(banner, /Streamable HTTP: http:\/\/127\.0\.0\.1:8080\/mcp/);
    assert.match(banner, /SSE: +http:\/\/127\.0\.0\.1:8080\/sse/);
    assert.match(banner, /Demo site: +http:\/\/127\.0\.0\.1:8081\//);
    assert.match(banner, /"url": "http:\/\/127\.0\.0\.1:8080\/mcp"/);
    // The printed configuration carries a fresh agent key; without it the door is shut.
    const key = banner.match(/"Authorization": "Bearer (omk_[\w-]+)"/)?.[1];
    assert.ok(key, banner);
    const refused = await fetch("http://127.0.0.1:8080/mcp", { method: "POST", body: "{}" });
    assert.equal(refused.status, 401);
    await refused.body?.cancel();
    const client = new Client({ name: "readme-check", version: "0" });
    await client.connect(keyedTransport("http://127.0.0.1:8080", key));
    await using c = new TestClient(client);
    const home = await c.call("browser_navigate", { url: "http://127.0.0.1:8081/" });
    assert.match(home.text, /# Omotai demo shop/);
    assert.match(home.text, /\[frame http:\/\/127\.0\.0\.1:8081\/widget\]/);
    const products = await c.call("browser_click", { ref: refOf(home.text, /"Products" ->/) });
    assert.match(products.text, /"Water filter" -> \/products\/3/);
  } finally {
    child.kill("SIGTERM");
    await reader.cancel().catch(() => {});
    const status = await child.status;
    await child.stderr.cancel().catch(() => {});
    assert.ok(status.code === 0 || status.signal === "SIGTERM", JSON.stringify(status));
  }
});

Deno.test("stdio mode through the omotai task's launcher: MCP on stdout, tools work", async () => {
  const dataDir = `runs/test-stdio-${crypto.randomUUID().slice(0, 8)}`;
  await using site = serveFixtureSite();
  await Deno.mkdir(dataDir, { recursive: true });
  const policyFile = `${dataDir}/policy.yaml`;
  await Deno.writeTextFile(policyFile, `allowed_origins: [${site.origin}]\n`);
  const c = await connectStdio(dataDir, await taskFlags("omotai"), policyFile);
  try {
    const r = await c.call("browser_navigate", { url: `${site.origin}/` });
    assert.equal(r.isError, false, r.text);
    assert.match(r.text, /# Fixture home/);
    const next = await c.call("browser_click", { ref: refOf(r.text, /"Next page" ->/) });
    assert.match(next.text, /# Next page/);
  } finally {
    await c[Symbol.asyncDispose]();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
});

Deno.test("the HTTP server refuses a DNS-rebinding Host on a real socket", async () => {
  await using h = await startHarness();
  const port = new URL(h.runtime.url!).port;
  const ask = async (host: string) => {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(port) });
    await conn.write(new TextEncoder().encode(
      `GET /sse HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
    ));
    const buf = new Uint8Array(256);
    const n = await conn.read(buf);
    conn.close();
    return new TextDecoder().decode(buf.subarray(0, n ?? 0)).split("\r\n")[0];
  };
  assert.equal(await ask(`attacker.test:${port}`), "HTTP/1.1 403 Forbidden");
  // The right Host gets past the rebinding check, and then needs an agent key.
  assert.equal(await ask(`127.0.0.1:${port}`), "HTTP/1.1 401 Unauthorized");
});

Deno.test("startRuntime() may bind beyond loopback in sse mode: every MCP request needs a key", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-bind-" });
  // No warm browser: nothing here browses.
  await using runtime = await startRuntime({
    mode: "sse",
    host: "0.0.0.0",
    port: 0,
    dataDir,
    warmBrowsers: 0,
  });
  const port = new URL(runtime.url!).port;
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(port) });
  await conn.write(new TextEncoder().encode(
    `POST /mcp HTTP/1.1\r\nHost: 0.0.0.0:${port}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
  ));
  const buf = new Uint8Array(512);
  const n = await conn.read(buf);
  conn.close();
  const head = new TextDecoder().decode(buf.subarray(0, n ?? 0));
  assert.match(head, /^HTTP\/1\.1 401 Unauthorized/);
  assert.match(head, /www-authenticate: Bearer realm="omotai"/i);
  await Deno.remove(dataDir, { recursive: true }).catch(() => {});
});

Deno.test("parseStartOptions() validates flags with clear messages", () => {
  assert.deepEqual(parseStartOptions([]).mode, "stdio");
  assert.equal(parseStartOptions(["--mode", "sse", "--port", "9000"]).port, 9000);
  assert.throws(() => parseStartOptions(["--mode", "ws"]), /--mode must be stdio or sse/);
  assert.throws(() => parseStartOptions(["--port", "99999"]), /--port must be a port number/);
  assert.throws(() => parseStartOptions(["--bogus"]), /bogus/);
  assert.deepEqual(parseStartOptions([]).isolation, { mode: "auto", browserUser: undefined });
  assert.deepEqual(
    parseStartOptions(["--isolation", "off", "--browser-user", "web"]).isolation,
    { mode: "off", browserUser: "web" },
  );
  assert.throws(
    () => parseStartOptions(["--isolation", "maybe"]),
    /--isolation must be auto or off/,
  );
});

Deno.test("omotai start reports a bad policy file naming key and line, and exits 1", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/bad.yaml`;
  await Deno.writeTextFile(file, "allowed_origins:\n  - https://ok.test\nread_onyl: true\n");
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "runtime/main.ts", "start", "--policy", file, "--data-dir", dir],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 1);
  assert.match(stderr, /POLICY_INVALID: .*bad\.yaml:3: unknown key "read_onyl"/);
  assert.equal(new TextDecoder().decode(out.stdout), "", "nothing but MCP ever goes to stdout");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("omotai start refuses a tampered or unsigned policy module at startup", async () => {
  const dir = await Deno.makeTempDir();
  const wasm = await baselineWasm();
  wasm[wasm.length - 1] ^= 0xff;
  await Deno.writeFile(`${dir}/m.wasm`, wasm);
  await Deno.copyFile(BASELINE_SIG, `${dir}/m.wasm.sig.json`);
  await Deno.writeFile(`${dir}/u.wasm`, await baselineWasm());
  for (const [file, code] of [["m.wasm", "HASH_MISMATCH"], ["u.wasm", "SIGNATURE_MISSING"]]) {
    await Deno.writeTextFile(`${dir}/policy.yaml`, `modules:\n  - path: ${file}\n`);
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "runtime/main.ts",
        "start",
        "--policy",
        `${dir}/policy.yaml`,
        "--data-dir",
        dir,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, stderr);
    assert.match(stderr, new RegExp(`POLICY_MODULE_REJECTED: ${code}`));
  }
  await Deno.remove(dir, { recursive: true });
});
