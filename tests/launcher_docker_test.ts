/**
 * The Dockerfile kept true without a container engine: its instructions are read, its
 * install step and its ENTRYPOINT + CMD are run here with the image's paths (WORKDIR, the
 * install root, the data volume) mapped to temporary ones, and the runtime it starts must
 * serve MCP, keep its data on the volume and refuse what the image's policy does not allow.
 *
 * @module
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { serveFixtureSite } from "./fixtures/site.ts";
import { TestClient } from "./helpers/harness.ts";

const CHECKOUT = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");

/** One Dockerfile instruction (continuation lines joined). */
interface Instruction {
  op: string;
  value: string;
}

/** The Dockerfile's instructions, comments dropped and `\` continuations joined. */
export function dockerInstructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = "";
  for (const raw of text.split("\n")) {
    if (/^\s*#/.test(raw) && pending === "") continue;
    const line = raw.replace(/\s+$/, "");
    if (line.endsWith("\\")) {
      pending += line.slice(0, -1) + " ";
      continue;
    }
    const whole = (pending + line).trim();
    pending = "";
    if (whole === "") continue;
    const m = whole.match(/^(\w+)\s+([\s\S]*)$/);
    assert.ok(m, `not an instruction: ${whole}`);
    out.push({ op: m[1].toUpperCase(), value: m[2] });
  }
  return out;
}

/** `ARG A=1` defaults of every ARG instruction. */
function argsOf(instructions: Instruction[]): Record<string, string> {
  const args: Record<string, string> = {};
  for (const i of instructions.filter((i) => i.op === "ARG")) {
    const eq = i.value.indexOf("=");
    assert.ok(eq > 0, `ARG with a default: ${i.value}`);
    args[i.value.slice(0, eq)] = i.value.slice(eq + 1);
  }
  return args;
}

/** `ENV A=1 B=2` pairs of every ENV instruction, `$ARG`s replaced as Docker does. */
function envOf(instructions: Instruction[]): Record<string, string> {
  const args = argsOf(instructions);
  const env: Record<string, string> = {};
  for (const i of instructions.filter((i) => i.op === "ENV")) {
    for (const pair of i.value.split(/\s+/)) {
      const eq = pair.indexOf("=");
      assert.ok(eq > 0, `ENV in KEY=VALUE form: ${pair}`);
      env[pair.slice(0, eq)] = pair.slice(eq + 1).replace(
        /\$\{?(\w+)\}?/g,
        (_, name: string) => env[name] ?? args[name] ?? assert.fail(`$${name} is not defined`),
      );
    }
  }
  return env;
}

function one(instructions: Instruction[], op: string): string {
  const found = instructions.filter((i) => i.op === op);
  assert.equal(found.length, 1, `one ${op}`);
  return found[0].value;
}

Deno.test("dockerInstructions() reads the image: non-root user, data dir on a volume, the installed launcher", async () => {
  const ins = dockerInstructions(await Deno.readTextFile(`${CHECKOUT}/Dockerfile`));
  const user = one(ins, "USER");
  assert.match(user, /^\d+$/, "a numeric uid: no name lookup decides who runs the browser");
  assert.notEqual(user, "0");
  assert.ok(
    ins.some((i) => i.op === "RUN" && i.value.includes(`useradd --create-home --uid ${user}`)),
  );
  const env = envOf(ins);
  assert.deepEqual(JSON.parse(one(ins, "VOLUME")), [env.OMOTAI_DATA_DIR]);
  assert.ok(
    ins.some((i) => i.op === "RUN" && i.value.includes(`mkdir -m 0700 ${env.OMOTAI_DATA_DIR}`)),
    "the volume starts 0700, as the runtime would create it",
  );
  const entrypoint: string[] = JSON.parse(one(ins, "ENTRYPOINT"));
  assert.deepEqual(entrypoint, [`${env.DENO_INSTALL_ROOT}/bin/omotai`]);
  // USER comes before the install, so the command and its caches belong to that user.
  const order = ins.map((i) => i.op + (i.value.includes("deno task install") ? "+install" : ""));
  assert.ok(order.indexOf("USER") < order.indexOf("RUN+install"));
  assert.ok(!ins.some((i) => /\s-A(\s|$)|--allow-all/.test(i.value)), "no -A anywhere");
});

Deno.test("the Dockerfile pins its browser: the package version, and that version's headless shell by hash, checked in the build and handed to the runtime", async () => {
  const ins = dockerInstructions(await Deno.readTextFile(`${CHECKOUT}/Dockerfile`));
  const args = argsOf(ins);
  const install = ins.find((i) => i.op === "RUN" && i.value.includes("apt-get install"))!;
  for (const pkg of ["chromium", "chromium-headless-shell", "chromium-sandbox"]) {
    assert.ok(install.value.includes(` ${pkg}=$CHROMIUM_VERSION `), `${pkg} pinned`);
  }
  assert.ok(
    install.value.includes(
      'echo "$CHROMIUM_HEADLESS_SHELL_SHA256_AMD64  /usr/lib/chromium/chromium-headless-shell" | sha256sum --check --strict -',
    ),
    "the build fails when the installed binary is not the pinned one",
  );
  assert.equal(envOf(ins).OMOTAI_BROWSER_SHA256, args.CHROMIUM_HEADLESS_SHELL_SHA256_AMD64);
  // This machine has Debian's package too: where it is the pinned version, its binary is the
  // pinned hash (two pins that disagree would fail every build).
  const dpkg = await new Deno.Command("dpkg-query", {
    args: ["-W", "-f", "${Version} ${Architecture}", "chromium-headless-shell"],
    stdout: "piped",
  }).output();
  const [version, arch] = new TextDecoder().decode(dpkg.stdout).split(" ");
  if (version === args.CHROMIUM_VERSION && arch === "amd64") {
    const sum = await new Deno.Command("sha256sum", {
      args: ["/usr/lib/chromium/chromium-headless-shell"],
      stdout: "piped",
    }).output();
    assert.equal(
      new TextDecoder().decode(sum.stdout).split(" ")[0],
      args.CHROMIUM_HEADLESS_SHELL_SHA256_AMD64,
    );
  } else {
    console.log(
      `  this machine has chromium-headless-shell ${version} (${arch}): hash not compared`,
    );
  }
});

Deno.test("the Dockerfile's install step and command line, run outside Docker, serve MCP from the volume", async () => {
  const ins = dockerInstructions(await Deno.readTextFile(`${CHECKOUT}/Dockerfile`));
  const env = envOf(ins);
  const workdir = one(ins, "WORKDIR");
  const tmp = await Deno.makeTempDir({ prefix: "omotai-image-" });
  await using site = serveFixtureSite();
  try {
    // The image's paths, mapped: the copied checkout, the install root, the volume.
    const paths: [string, string][] = [
      [workdir, CHECKOUT],
      [env.DENO_INSTALL_ROOT, `${tmp}/deno`],
      [env.OMOTAI_DATA_DIR, `${tmp}/data`],
    ];
    const map = (s: string) => {
      for (const [from, to] of paths) {
        if (s === from || s.startsWith(`${from}/`)) return to + s.slice(from.length);
      }
      return s;
    };
    await Deno.mkdir(`${tmp}/data`, { mode: 0o700 });
    const mappedEnv = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, map(v)]));
    // The RUN step's `deno task install`, with the image's environment.
    const install = await new Deno.Command(Deno.execPath(), {
      args: ["task", "install"],
      cwd: CHECKOUT,
      env: mappedEnv,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(install.code, 0, new TextDecoder().decode(install.stderr));

    const [command, ...entryArgs] = (JSON.parse(one(ins, "ENTRYPOINT")) as string[]).map(map);
    const cmd = (JSON.parse(one(ins, "CMD")) as string[]).map(map);
    const transport = new StdioClientTransport({
      command,
      args: [...entryArgs, ...cmd],
      cwd: CHECKOUT,
      env: {
        ...mappedEnv,
        PATH: "/usr/local/bin:/usr/bin:/bin",
        HOME: Deno.env.get("HOME") ?? "/root",
      },
      stderr: "pipe",
    });
    const client = new Client({ name: "docker-cmd", version: "0" });
    await client.connect(transport);
    await using c = new TestClient(client);
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === "browser_snapshot"));
    // The image's demo policy allows only the demo shop's origin.
    const r = await c.call("browser_navigate", { url: `${site.origin}/` });
    assert.match(r.text, /^denied: ORIGIN_NOT_ALLOWED/, r.text);
    assert.ok((await Deno.stat(`${tmp}/data/omotai.db`)).isFile, "the database is on the volume");
    assert.ok(site.hits.length === 0, "nothing reached the page");
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
});
