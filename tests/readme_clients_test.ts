/**
 * The README's install line and client blocks, run as written: the install line in the
 * checkout (into a temporary install root), then each client's command spawned from `/` with
 * only the install root's `bin/` and the system's on PATH (no `deno` there), listing the tools
 * and browsing a local page. The README's placeholder policy path is the one thing replaced,
 * by an absolute path to a policy allowing that page.
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

/** The README's first command: its first fenced block, first line, comment dropped. */
export function installLine(markdown: string): string {
  const first = fences(markdown)[0];
  return first.body.split("\n")[0].replace(/\s+#.*$/, "");
}

Deno.test("clientBlocks() finds one stdio block per client, each spawning omotai with the placeholder", async () => {
  const readme = await Deno.readTextFile(`${CHECKOUT}/README.md`);
  const blocks = clientBlocks(readme);
  assert.deepEqual(blocks.map((b) => b.client), [...CLIENTS]);
  for (const b of blocks) {
    assert.equal(b.command, "omotai", b.client);
    assert.deepEqual(b.args, ["start", "--policy", PLACEHOLDER], b.client);
  }
  // The README starts with the install line, before anything else is shown.
  const head = readme.slice(0, readme.indexOf("```"));
  assert.match(head, /^# Omotai\n\n[^\n]+\n\n$/);
  assert.equal(installLine(readme), "npx -y deno@2.9.6 task install");
});

Deno.test("the README's install line and every client block work as written from /", async () => {
  const readme = await Deno.readTextFile(`${CHECKOUT}/README.md`);
  const tmp = await Deno.makeTempDir({ prefix: "omotai-readme-" });
  await using site = serveFixtureSite();
  try {
    const root = `${tmp}/install-root`;
    // The line as written, in the checkout, as a person would type it.
    const install = await new Deno.Command("sh", {
      args: ["-c", installLine(readme)],
      cwd: CHECKOUT,
      env: {
        DENO_INSTALL_ROOT: root,
        NO_UPDATE_NOTIFIER: "1",
        npm_config_update_notifier: "false",
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const installOut = new TextDecoder().decode(install.stdout) +
      new TextDecoder().decode(install.stderr);
    assert.equal(install.code, 0, installOut);
    assert.match(installOut, new RegExp(`${root}/bin/omotai`));

    const policy = `${tmp}/policy.yaml`;
    await Deno.writeTextFile(policy, `allowed_origins: [${site.origin}]\n`);
    for (const block of clientBlocks(readme)) {
      const state = `${tmp}/state-${block.client.replaceAll(" ", "-")}`;
      const transport = new StdioClientTransport({
        command: block.command,
        args: block.args.map((a) => a === PLACEHOLDER ? policy : a),
        cwd: "/",
        // What a client passes on: a PATH with the install root's bin/ (no deno on it), HOME.
        env: {
          PATH: `${root}/bin:/usr/local/bin:/usr/bin:/bin`,
          HOME: Deno.env.get("HOME") ?? "/root",
          XDG_STATE_HOME: state,
        },
        stderr: "pipe",
      });
      const client = new Client({ name: `readme-${block.client}`, version: "0" });
      await client.connect(transport);
      await using c = new TestClient(client);
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === "browser_navigate"), block.client);
      const r = await c.call("browser_navigate", { url: `${site.origin}/` });
      assert.equal(r.isError, false, `${block.client}: ${r.text}`);
      assert.match(r.text, /# Fixture home/, block.client);
      // The data landed in the user state dir, not under / or the checkout.
      assert.equal((await Deno.stat(`${state}/omotai`)).mode! & 0o777, 0o700, block.client);
    }
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
});
