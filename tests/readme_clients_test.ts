/**
 * The README's client blocks, run as a user's client runs them: each block's command spawned
 * (once per distinct command line: blocks that spawn the same one are the same run) from `/`
 * with one fresh `HOME` (one user: the first start fills its npm and Deno caches, as the
 * README's `npx -y omotai --version` before it does here), `PATH` holding only `node`, `npx` and
 * the system's directories (no `deno`), listing the tools and browsing a local page.
 *
 * Two words are replaced. The package name `omotai` after `npx -y` becomes
 * `file:<tarball>`, the tarball `npm pack` makes of this checkout (what would be published; npx
 * installs and runs its `omotai` bin exactly as it would the registry's). The README's
 * placeholder policy path becomes an absolute path to a policy allowing that page. npm fetches
 * the package's `deno` dependency and Deno the runtime's npm packages from the registry, as on a
 * user's first start (with this machine's TLS trust and proxy variables, `registryAccess()`).
 *
 * @module
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { serveFixtureSite } from "./fixtures/site.ts";
import { TestClient } from "./helpers/harness.ts";
import { VERSION } from "../runtime/version.ts";

const CHECKOUT = fileURLToPath(new URL("..", import.meta.url));
const PLACEHOLDER = "/home/you/omotai-policy.yaml";
const CLIENTS = ["Claude Desktop", "Claude Code", "Cursor", "VS Code"] as const;

/** A client's way of spawning omotai, as its README block says. */
export interface ClientBlock {
  client: typeof CLIENTS[number];
  command: string;
  args: string[];
}

/** A fenced block of the README with the paragraph just before it. */
interface Fence {
  lang: string;
  body: string;
  label: string;
}

function fences(markdown: string): Fence[] {
  const out: Fence[] = [];
  const lines = markdown.split("\n");
  let paragraph: string[] = [];
  let label = "";
  for (let i = 0; i < lines.length; i++) {
    const open = lines[i].match(/^```(\w*)$/);
    if (!open) {
      if (lines[i].trim() === "") {
        if (paragraph.length > 0) label = paragraph.join(" ");
        paragraph = [];
      } else paragraph.push(lines[i]);
      continue;
    }
    if (paragraph.length > 0) label = paragraph.join(" ");
    paragraph = [];
    const end = lines.indexOf("```", i + 1);
    out.push({ lang: open[1], body: lines.slice(i + 1, end).join("\n"), label });
    i = end;
  }
  return out;
}

/** The client blocks of the README: JSON `mcpServers`/`servers` entries and `claude mcp add … --`. */
export function clientBlocks(markdown: string): ClientBlock[] {
  const blocks: ClientBlock[] = [];
  for (const f of fences(markdown)) {
    const client = CLIENTS.find((c) => f.label.includes(c));
    if (f.lang === "json") {
      const config = JSON.parse(f.body);
      const entry = (config.mcpServers ?? config.servers)?.omotai;
      if (!entry) continue;
      assert.ok(client, `a client block needs its client named before it: ${f.label}`);
      blocks.push({ client, command: entry.command, args: entry.args });
    } else if (f.lang === "sh") {
      for (const line of f.body.split("\n")) {
        // Stdio servers only; `claude mcp add --transport http …` is the sse quick start's.
        const m = line.match(/^claude mcp add .* -- (.+)$/);
        if (!m) continue;
        assert.ok(client, `a client block needs its client named before it: ${f.label}`);
        const [command, ...args] = m[1].trim().split(/\s+/);
        blocks.push({ client, command, args });
      }
    }
  }
  return blocks;
}

/** The npx arguments of a block with the package name replaced by `spec` (`-y omotai` → `-y spec`). */
export function withPackage(args: readonly string[], spec: string): string[] {
  const at = args.indexOf("omotai");
  assert.ok(at > 0 && args.slice(0, at).every((a) => a.startsWith("-")), `npx ${args.join(" ")}`);
  return args.map((a, i) => i === at ? spec : a);
}

/** The command the README says to run once before a client's first start. */
export function warmUpLine(markdown: string): string {
  const m = markdown.replaceAll(/\s+/g, " ").match(/run `(npx -y omotai --version)` once before/);
  assert.ok(m, "the README says what to run before a first start");
  return m[1];
}

Deno.test("clientBlocks() finds one stdio block per client, each running the npm package with the placeholder", async () => {
  const readme = await Deno.readTextFile(`${CHECKOUT}/README.md`);
  const blocks = clientBlocks(readme);
  assert.deepEqual(blocks.map((b) => b.client), [...CLIENTS]);
  for (const b of blocks) {
    assert.equal(b.command, "npx", b.client);
    assert.deepEqual(b.args, ["-y", "omotai", "start", "--policy", PLACEHOLDER], b.client);
  }
  // The README shows the client block first, before anything else.
  assert.equal(fences(readme)[0].label.includes("Claude Desktop"), true);
  assert.deepEqual(withPackage(blocks[0].args, "file:/t.tgz").slice(0, 2), ["-y", "file:/t.tgz"]);
  assert.equal(warmUpLine(readme), "npx -y omotai --version");
});

/** Runs `command` (words) with only `env`, from `cwd`; its exit code, stdout and all output. */
async function run(
  command: string[],
  env: Record<string, string>,
  cwd = "/",
): Promise<{ code: number; stdout: string; out: string }> {
  const out = await new Deno.Command(command[0], {
    args: command.slice(1),
    cwd,
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  return { code: out.code, stdout, out: stdout + new TextDecoder().decode(out.stderr) };
}

/**
 * How this machine reaches the registry, passed on as a user's environment would: its TLS
 * trust (a proxy that re-signs may need its CA) and proxy variables, as far as they are set.
 */
function registryAccess(): Record<string, string> {
  const names = [
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "DENO_CERT",
    "DENO_TLS_CA_STORE",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
    "NPM_CONFIG_REGISTRY",
    "npm_config_registry",
  ];
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** Where `name` is on this machine's PATH. */
async function whereIs(name: string): Promise<string> {
  const found = await run(["sh", "-c", `command -v ${name}`], { PATH: Deno.env.get("PATH") ?? "" });
  assert.equal(found.code, 0, `${name} is on PATH`);
  return found.stdout.trim();
}

Deno.test("the README's client blocks work as written from / with a fresh HOME, from the packed npm package", async () => {
  const readme = await Deno.readTextFile(`${CHECKOUT}/README.md`);
  const tmp = await Deno.makeTempDir({ prefix: "omotai-readme-" });
  await using site = serveFixtureSite();
  try {
    const home = `${tmp}/home`;
    const bin = `${tmp}/bin`;
    await Deno.mkdir(home);
    await Deno.mkdir(bin);
    // Node and npm only, beside the system's directories: no deno on this PATH.
    for (const name of ["node", "npm", "npx"]) {
      await Deno.symlink(await whereIs(name), `${bin}/${name}`);
    }
    const env = { ...registryAccess(), HOME: home, PATH: `${bin}:/usr/bin:/bin` };
    assert.ok(!existsSync("/usr/bin/deno") && !existsSync("/bin/deno"), "no deno on PATH");

    const packed = await run(["npm", "pack", "--json", "--pack-destination", tmp], env, CHECKOUT);
    assert.equal(packed.code, 0, packed.out);
    const tarball = `${tmp}/${JSON.parse(packed.stdout)[0].filename}`;
    const spec = `file:${tarball}`;

    // The README's advice before a first start, as written but for the package.
    const [npx, ...warmArgs] = warmUpLine(readme).split(" ");
    const warm = await run([npx, ...withPackage(warmArgs, spec)], env);
    assert.equal(warm.code, 0, warm.out);
    assert.match(warm.stdout, new RegExp(`^${VERSION.replaceAll(".", "\\.")}$`, "m"));

    const policy = `${tmp}/policy.yaml`;
    await Deno.writeTextFile(policy, `allowed_origins: [${site.origin}]\n`);
    // Blocks that spawn the same command line are one run: the clients differ only in where
    // their config keeps it (the first test reads every block), and one start proves them all.
    const runs = new Map<string, ClientBlock & { clients: string[] }>();
    for (const block of clientBlocks(readme)) {
      const line = JSON.stringify([block.command, ...block.args]);
      const same = runs.get(line);
      if (same) same.clients.push(block.client);
      else runs.set(line, { ...block, clients: [block.client] });
    }
    for (const run of runs.values()) {
      const block = { ...run, client: run.clients.join(", ") };
      const transport = new StdioClientTransport({
        command: block.command,
        args: withPackage(block.args, spec).map((a) => a === PLACEHOLDER ? policy : a),
        cwd: "/",
        // What a client passes on: its PATH and HOME.
        env,
        stderr: "pipe",
      });
      // Read, so a chatty first start never fills the pipe; shown when the block fails.
      let stderr = "";
      transport.stderr?.on(
        "data",
        (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk),
      );
      const client = new Client({ name: `readme-${run.clients[0]}`, version: "0" });
      await client.connect(transport);
      await using c = new TestClient(client);
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === "browser_navigate"), `${block.client}: ${stderr}`);
      const r = await c.call("browser_navigate", { url: `${site.origin}/` });
      assert.equal(r.isError, false, `${block.client}: ${r.text}\n${stderr}`);
      assert.match(r.text, /# Fixture home/, block.client);
      // The data landed in the fresh HOME's user state dir, not under / or the package.
      const state = `${home}/.local/state/omotai`;
      assert.equal((await Deno.stat(state)).mode! & 0o777, 0o700, block.client);
    }

    // The client's close (stdin shut, then SIGTERM to npx) ended the whole chain: npx, the
    // Node bin, the launcher, the runtime and its browsers (their command lines name HOME).
    let left = "";
    for (let i = 0; i < 60; i++) {
      left = (await run(["pgrep", "-a", "-f", home], { PATH: "/usr/bin:/bin" })).stdout;
      if (left === "") break;
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(left, "", "no process of the clients' runs is left");

    // Nothing was written into npm's copy of the package: Deno kept the runtime's npm
    // packages in its own cache, and fetched only those the runtime imports (not the policy
    // compiler's binaryen).
    const npxDir = `${home}/.npm/_npx`;
    const copies = [...Deno.readDirSync(npxDir)]
      .map((e) => `${npxDir}/${e.name}/node_modules/omotai`)
      .filter((d) => existsSync(d));
    assert.equal(copies.length, 1, "one npx copy of the package");
    assert.ok(!existsSync(`${copies[0]}/node_modules`), "no node_modules/ in npm's copy");
    assert.equal(
      await Deno.readTextFile(`${copies[0]}/deno.lock`),
      await Deno.readTextFile(`${CHECKOUT}/deno.lock`),
    );
    const npmCache = `${home}/.cache/deno/npm/registry.npmjs.org`;
    assert.ok(existsSync(`${npmCache}/zod`), "the runtime's npm packages in Deno's cache");
    assert.ok(!existsSync(`${npmCache}/binaryen`), "only what the runtime imports");
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
});
