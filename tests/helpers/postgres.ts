/**
 * A throwaway PostgreSQL cluster for tests: Debian's `postgresql` binaries, a copy of a
 * pristine `initdb` output (made once per machine; `initdb: true` runs its own) in a temp dir,
 * a loopback port, run as the `postgres` user when the tests run as root (the
 * server refuses root). It makes the roles by running `docs/deploy.md`'s own `deploy-roles-sql`
 * block: an owner that runs the migrations and the NOLOGIN group `omotai_runtime` that holds
 * the runtime's grants; then an app login in that group (neither superuser nor `BYPASSRLS`),
 * bound to no tenant: what tests that play a runtime naming any tenant log in as. Every role
 * has a password over TCP (scram); the superuser, `postgres` as on Debian, is there only for
 * tests that play a database superuser (and for `roles: false`, a cluster with none of this).
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type postgres from "postgres";
import { deployBlock, readDeployDoc } from "./deploy_doc.ts";

/** A running cluster and how to reach it as each role. */
export interface TestPostgres extends AsyncDisposable {
  port: number;
  /** The owner of the schema (migrations). */
  ownerUrl: string;
  /** The runtime's login: a member of `omotai_runtime`, no BYPASSRLS. */
  appUrl: string;
  /** A superuser (`postgres`), for tests that attack the database as its superuser. */
  superUrl: string;
  /** Stops the server (the cluster stays); `start()` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** Where Debian puts the server's binaries: the newest version's `bin`. */
export function postgresBin(): string | undefined {
  try {
    const versions = [...Deno.readDirSync("/usr/lib/postgresql")]
      .map((e) => e.name).filter((n) => /^\d+$/.test(n)).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) {
      const bin = `/usr/lib/postgresql/${v}/bin`;
      if (exists(join(bin, "initdb"))) return bin;
    }
  } catch { /* no Debian layout */ }
  return undefined;
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

async function run(argv: string[], what: string): Promise<string> {
  const out = await new Deno.Command(argv[0], {
    args: argv.slice(1),
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${what} failed (${out.code}): ${text.trim().slice(-2000)}`);
  return text;
}

const PASSWORDS = {
  super: "pg-super-" + crypto.randomUUID(),
  owner: "pg-owner-" + crypto.randomUUID(),
  app: "pg-app-" + crypto.randomUUID(),
};

/** How a test cluster runs. */
export interface StartPostgresOptions {
  /**
   * Commits flushed to disk before they return (`fsync`, `synchronous_commit`, full-page
   * writes on), as a production server runs: benchmarks measure with it. Tests run without
   * (a test's cluster is thrown away; its speed is what counts).
   */
  durable?: boolean;
  /**
   * Make the database and its roles (default). `false`: a fresh cluster with its superuser
   * only, for a test that makes them itself as docs/deploy.md says (`ownerUrl` and `appUrl`
   * then name roles nobody made).
   */
  roles?: boolean;
  /**
   * Run `initdb` for this cluster, for a test whose claim starts from one (docs/deploy.md's
   * run). Default: a copy of a pristine `initdb` output made once per machine; as new a
   * cluster (its own directory, port and passwords), for a fraction of the CPU.
   */
  initdb?: boolean;
}

/** The `postgres` user that owns the clusters when the tests run as root; none otherwise. */
async function clusterOwner(): Promise<{ uid: number; gid: number } | undefined> {
  if (Deno.uid() !== 0) return undefined;
  return {
    uid: Number((await run(["id", "-u", "postgres"], "id")).trim()),
    gid: Number((await run(["id", "-g", "postgres"], "id")).trim()),
  };
}

/** `initdb` of a new cluster in `data` (whose parent exists), its superuser's password `password`. */
async function initdb(
  bin: string,
  data: string,
  as: string[],
  owner: { uid: number; gid: number } | undefined,
  password: string,
): Promise<void> {
  const pwfile = `${data}.pw`;
  await Deno.writeTextFile(pwfile, password + "\n");
  if (owner) await Deno.chown(pwfile, owner.uid, null);
  try {
    await run(
      [...as, join(bin, "initdb"), ...INITDB_OPTIONS, "-D", data, `--pwfile=${pwfile}`],
      "initdb",
    );
  } finally {
    await Deno.remove(pwfile).catch(() => {});
  }
}

const INITDB_OPTIONS = [
  "-U",
  "postgres",
  "--auth-local=trust",
  "--auth-host=scram-sha-256",
  "-E",
  "UTF8",
  "--no-sync",
  "--no-instructions",
];

/**
 * A pristine cluster (`initdb` output, never started) that new clusters are copied from:
 * an `initdb` costs over a CPU-second, a copy a small part of it. One per machine, kept in
 * the system temp dir under a name keyed by the server's binaries, the options and the
 * owner, so another PostgreSQL or other options get their own. Made in a directory of its
 * own and renamed into place, so test files starting at once never see half of one: the
 * first rename wins, the others throw theirs away.
 */
async function pristineTemplate(
  bin: string,
  as: string[],
  owner: { uid: number; gid: number } | undefined,
): Promise<string> {
  const server = await Deno.stat(join(bin, "postgres"));
  const key = await sha256(JSON.stringify({
    bin,
    size: server.size,
    mtime: server.mtime?.getTime(),
    options: INITDB_OPTIONS,
    owner: owner?.uid ?? Deno.uid(),
  }));
  const tmp = Deno.env.get("TMPDIR") || "/tmp";
  const template = join(tmp, `omotai-pg-template-${key.slice(0, 16)}`);
  const data = join(template, "data");
  if (exists(join(data, "PG_VERSION")) && exists(join(data, "global", "pg_control"))) return data;
  const building = await Deno.makeTempDir({ dir: tmp, prefix: "omotai-pg-template-new-" });
  try {
    if (owner) await Deno.chown(building, owner.uid, owner.gid);
    await Deno.chmod(building, 0o700);
    // The template's superuser password is never used: every copy sets its own.
    await initdb(bin, join(building, "data"), as, owner, "template-" + crypto.randomUUID());
    try {
      await Deno.rename(building, template);
    } catch (err) {
      // Another test file's template got there first (a non-empty directory is not replaced).
      if (!exists(join(data, "PG_VERSION"))) throw err;
    }
  } finally {
    await Deno.remove(building, { recursive: true }).catch(() => {});
  }
  return data;
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Starts a fresh cluster with the database `omotai` and its roles. */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<TestPostgres> {
  const bin = postgresBin();
  if (!bin) throw new Error("PostgreSQL is not installed (apt-get install postgresql)");
  const dir = await Deno.makeTempDir({ prefix: "omotai-pg-" });
  const data = join(dir, "data");
  // The server refuses to run as root: the cluster belongs to Debian's `postgres` user.
  const owner = await clusterOwner();
  const as = owner ? ["runuser", "-u", "postgres", "--"] : [];
  if (owner) await Deno.chown(dir, owner.uid, owner.gid);
  await Deno.chmod(dir, 0o700);
  const fresh = options.initdb === true;
  if (fresh) {
    await initdb(bin, data, as, owner, PASSWORDS.super);
  } else {
    // A copy of the pristine template is a new cluster in its own directory (its own port
    // below, its own superuser password set before anyone connects over TCP).
    const template = await pristineTemplate(bin, as, owner);
    await run([...as, "cp", "-a", template, data], "copy of the template cluster");
  }
  const port = freePort();
  const pgCtl = (action: "start" | "stop") =>
    run([
      ...as,
      join(bin, "pg_ctl"),
      "-D",
      data,
      "-l",
      join(dir, "server.log"),
      "-w",
      "-t",
      "60",
      ...(action === "stop" ? ["-m", "fast"] : [
        "-o",
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200` +
        (options.durable ? "" : " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"),
      ]),
      action,
    ], `pg_ctl ${action}`);
  await pgCtl("start");
  let running = true;
  // A run that never reaches its teardown test (`--filter`, a failure) still leaves no
  // server and no directory behind.
  const atExit = () => {
    if (running) {
      const argv = [...as, join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "stop"];
      new Deno.Command(argv[0], { args: argv.slice(1), stdout: "null", stderr: "null" })
        .outputSync();
      running = false;
    }
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch { /* gone already */ }
  };
  globalThis.addEventListener("unload", atExit);
  try {
    // A copy of the template still has the template's throwaway superuser password: this
    // cluster's own is set first, over the socket (trust), before any TCP login.
    const superPassword = fresh ? "" : "ALTER ROLE postgres PASSWORD :'super_password';\n";
    // The roles exactly as docs/deploy.md makes them (its `deploy-roles-sql` block, run by
    // psql), then the tests' unbound login.
    const roles = options.roles === false
      ? ""
      : `${
        deployBlock(await readDeployDoc(), "deploy-roles-sql").body
      }\nCREATE ROLE omotai_app LOGIN PASSWORD :'app_password' IN ROLE omotai_runtime;\n`;
    if (superPassword + roles === "") return handle();
    const script = join(dir, "roles.sql");
    await Deno.writeTextFile(script, superPassword + roles);
    if (owner) await Deno.chown(script, owner.uid, null);
    await run([
      ...as,
      join(bin, "psql"),
      "-h",
      dir,
      "-p",
      String(port),
      "-U",
      "postgres",
      "-d",
      "postgres",
      "-v",
      "ON_ERROR_STOP=1",
      "-v",
      `super_password=${PASSWORDS.super}`,
      "-v",
      `owner_password=${PASSWORDS.owner}`,
      "-v",
      `app_password=${PASSWORDS.app}`,
      "-q",
      "-f",
      script,
    ], "psql (docs/deploy.md roles)");
  } catch (err) {
    await pgCtl("stop").catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw err;
  }
  return handle();

  function handle(): TestPostgres {
    return {
      port,
      ownerUrl: url("omotai_owner", PASSWORDS.owner),
      appUrl: url("omotai_app", PASSWORDS.app),
      superUrl: url("postgres", PASSWORDS.super),
      async stop() {
        if (!running) return;
        await pgCtl("stop");
        running = false;
      },
      async start() {
        if (running) return;
        await pgCtl("start");
        running = true;
      },
      async [Symbol.asyncDispose]() {
        globalThis.removeEventListener("unload", atExit);
        if (running) await pgCtl("stop").catch(() => {});
        running = false;
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      },
    };
  }

  function url(user: string, password: string): string {
    return `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/omotai`;
  }
}

/**
 * The last test of a file whose tests share one cluster: closes `pools`, then stops and
 * removes the cluster (its connections outlive single tests, so the sanitizers are off).
 */
export function clusterTeardown(
  name: string,
  pg: TestPostgres,
  ...pools: AsyncDisposable[]
): Deno.TestDefinition {
  return {
    name: `${name}: the throwaway cluster stops`,
    fn: async () => {
      for (const pool of pools) await pool[Symbol.asyncDispose]();
      await pg[Symbol.asyncDispose]();
    },
    sanitizeResources: false,
    sanitizeOps: false,
  };
}

/**
 * Runs `fn` in a transaction on a raw connection, naming `tenant` (or none): what a runtime
 * that sends any SQL it likes can do.
 */
export function asTenant<T>(
  sql: postgres.Sql,
  tenant: string | null,
  fn: (tx: postgres.TransactionSql) => Promise<T>,
): Promise<T> {
  return sql.begin(async (tx) => {
    if (tenant !== null) await tx`SELECT set_config('app.tenant_id', ${tenant}, true)`;
    return await fn(tx);
  }) as Promise<T>;
}

/** Asserts that each of `statements`, sent as `tenant` on `sql`, is refused with `refusal`. */
export async function assertRefused(
  sql: postgres.Sql,
  tenant: string | null,
  statements: readonly string[],
  refusal: RegExp,
): Promise<void> {
  for (const stmt of statements) {
    await assert.rejects(asTenant(sql, tenant, (tx) => tx.unsafe(stmt)), refusal, stmt);
  }
}

/**
 * For a test that stops the server: the `postgres` client, under Deno, sometimes lets a
 * connection the stop cuts mid-query escape as an unhandled `ECONNRESET`/`EPIPE` rejection,
 * a reconnect to the stopped server as an unhandled `connect ECONNREFUSED` (seen once in a
 * loaded full suite, in a question's wait through the outage), or a TypeError from a write to
 * its closed socket (seen with bare `PgDatabase` queries and none of this code; the runtime's
 * last resort logs such faults and goes on). Those, and nothing else, are let pass until the
 * returned handle is disposed; everything the test asserts still has to hold.
 */
export function clientFaultsTolerated(): Disposable {
  const known = (err: unknown) =>
    (err instanceof Error && (
      ["ECONNRESET", "EPIPE", "ECONNREFUSED"].includes(String((err as { code?: unknown }).code)) ||
      /^(read|write) (ECONNRESET|EPIPE)$/.test(err.message) ||
      /^connect ECONNREFUSED [\d.]+:\d+$/.test(err.message)
    )) ||
    (err instanceof TypeError &&
      err.message === "Cannot read properties of null (reading 'write')");
  const onRejection = (e: PromiseRejectionEvent) => {
    if (known(e.reason)) e.preventDefault();
  };
  const onError = (e: ErrorEvent) => {
    if (known(e.error)) e.preventDefault();
  };
  globalThis.addEventListener("unhandledrejection", onRejection);
  globalThis.addEventListener("error", onError);
  return {
    [Symbol.dispose]() {
      globalThis.removeEventListener("unhandledrejection", onRejection);
      globalThis.removeEventListener("error", onError);
    },
  };
}
