/**
 * The MCP clients people use, pinned, for `tests/clients_test.ts`: the MCP Inspector's CLI
 * and mcp-remote, installed from npm into `tests/.clients/` (gitignored) on first use and
 * run with `node`. Nothing is installed globally. A marker file names the exact packages
 * installed, so a version bump here reinstalls; a lock file keeps test files running in
 * parallel from installing into the same directory at once.
 *
 * @module
 */

/** The pinned client packages, exact versions. */
export const CLIENT_PACKAGES = {
  "@modelcontextprotocol/inspector": "2.12.0",
  "mcp-remote": "0.15.1",
} as const;

const CLIENTS_DIR = new URL("../.clients/", import.meta.url).pathname;
const MARKER = `${CLIENTS_DIR}installed.json`;
const LOCK = `${CLIENTS_DIR}install.lock`;
/** An install takes well under a minute; a lock older than this was left by a dead run. */
const STALE_LOCK_MS = 5 * 60_000;
/** How long a run waits for another run's install before giving up. */
const WAIT_MS = 10 * 60_000;

/** The bin scripts of the installed clients, each run as `node <path> …`. */
export interface ClientBins {
  /** `npx @modelcontextprotocol/inspector` (`--cli` selects the CLI mode). */
  inspector: string;
  /** `npx mcp-remote`: a stdio server bridging to a remote HTTP/SSE MCP endpoint. */
  mcpRemote: string;
}

let installed: Promise<ClientBins> | undefined;

/**
 * Installs the pinned clients into `tests/.clients/` unless the marker says they are there,
 * and returns their bin scripts. Once per process; a failed install is tried again on the
 * next call.
 */
export function ensureClientsInstalled(): Promise<ClientBins> {
  installed ??= install().catch((err) => {
    installed = undefined;
    throw err;
  });
  return installed;
}

/**
 * Environment that keeps the clients' own state (the Inspector's catalog, client config and
 * OAuth/secret stores, mcp-remote's `~/.mcp-auth`) in `dir` instead of the user's home.
 */
export function clientStateEnv(dir: string): Record<string, string> {
  return {
    MCP_STORAGE_DIR: `${dir}/inspector`,
    MCP_CATALOG_PATH: `${dir}/inspector/mcp.json`,
    MCP_CLIENT_CONFIG_PATH: `${dir}/inspector/client.json`,
    MCP_INSPECTOR_SECRET_STORE: "memory",
    MCP_REMOTE_CONFIG_DIR: `${dir}/mcp-remote`,
  };
}

function pinnedSpecs(): string[] {
  return Object.entries(CLIENT_PACKAGES).map(([name, version]) => `${name}@${version}`);
}

async function install(): Promise<ClientBins> {
  const wanted = JSON.stringify(pinnedSpecs());
  await Deno.mkdir(CLIENTS_DIR, { recursive: true });
  const deadline = Date.now() + WAIT_MS;
  while (await readMarker() !== wanted) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${LOCK}`);
    if (!await takeLock()) {
      await new Promise((r) => setTimeout(r, 500));
      continue;
    }
    try {
      // Another run may have finished between our look at the marker and taking the lock.
      if (await readMarker() === wanted) break;
      await Deno.remove(MARKER).catch(() => {});
      await npmInstall();
      await Deno.writeTextFile(MARKER, wanted);
    } finally {
      await Deno.remove(LOCK).catch(() => {});
    }
  }
  return {
    inspector: await binOf("@modelcontextprotocol/inspector", "mcp-inspector"),
    mcpRemote: await binOf("mcp-remote", "mcp-remote"),
  };
}

async function readMarker(): Promise<string | undefined> {
  return await Deno.readTextFile(MARKER).catch(() => undefined);
}

/** Creates the lock file; false when another run holds it (a stale one is removed first). */
async function takeLock(): Promise<boolean> {
  try {
    await Deno.writeTextFile(LOCK, String(Deno.pid), { createNew: true });
    return true;
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    const info = await Deno.stat(LOCK).catch(() => undefined);
    if (info?.mtime && Date.now() - info.mtime.getTime() > STALE_LOCK_MS) {
      await Deno.remove(LOCK).catch(() => {});
    }
    return false;
  }
}

async function npmInstall(): Promise<void> {
  const specs = pinnedSpecs();
  console.error(`clients: installing ${specs.join(" ")} into tests/.clients`);
  const out = await new Deno.Command("npm", {
    args: [
      "install",
      "--prefix",
      CLIENTS_DIR,
      "--save-exact",
      // The clients' install scripts are not needed to run them; nothing runs unasked.
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      // The Inspector declares Node >= 22 and warns on older ones; its CLI runs on Node 20.
      "--loglevel=error",
      ...specs,
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `npm install ${specs.join(" ")} failed:\n${new TextDecoder().decode(out.stderr)}`,
    );
  }
}

/** The path of `pkg`'s bin script `name`, after checking the installed version is the pin. */
async function binOf(pkg: keyof typeof CLIENT_PACKAGES, name: string): Promise<string> {
  const dir = `${CLIENTS_DIR}node_modules/${pkg}/`;
  const manifest = JSON.parse(await Deno.readTextFile(`${dir}package.json`)) as {
    version: string;
    bin?: string | Record<string, string>;
  };
  if (manifest.version !== CLIENT_PACKAGES[pkg]) {
    throw new Error(`${pkg} ${manifest.version} is installed, ${CLIENT_PACKAGES[pkg]} is pinned`);
  }
  const bin = typeof manifest.bin === "string" ? manifest.bin : manifest.bin?.[name];
  if (!bin) throw new Error(`${pkg} has no bin named ${name}`);
  return new URL(bin, `file://${dir}`).pathname;
}
