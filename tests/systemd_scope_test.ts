/**
 * The systemd-run backend (runtime/isolation/systemd_scope.ts) with a real Chromium, on a
 * machine without systemd: `systemd-run` is a small shell script standing first where the
 * backend looks, which records its argv, then does for its caller what `systemd-run --scope`
 * does (the calling process into a fresh cgroup2 group named after `--unit`) and execs the
 * command after `--`. What is real: the argv the runtime builds, the browser starting under
 * it, the kernel's cgroup2 placement of the browser and every process it starts, and the
 * runtime finding the group from `/proc/<pid>/cgroup`. What is not: systemd applying the unit
 * properties (`MemoryMax=` ...), which needs systemd; the recorded argv is checked instead,
 * and the limits check is the one `runtime/isolation/systemd_scope_test.ts` drives.
 *
 * A control: a `systemd-run` that runs the command without placing it: the launch fails
 * closed (the browser is not in its scope) and the browser is ended.
 *
 * Skipped where this machine has no writable cgroup2 hierarchy (not root, or no cgroup2).
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { findBrowser, ProfileStore } from "../cdp/mod.ts";
import { OmotaiError } from "../runtime/errors.ts";
import { startBrowser } from "../runtime/browser/launch.ts";
import {
  cgroup2Mount,
  findNice,
  type SystemdHost,
  SystemdScopes,
} from "../runtime/isolation/mod.ts";
import { eventually } from "./helpers/harness.ts";

const LIMITS = { memoryBytes: 1536 * 2 ** 20, pids: 1024, cpuWeight: 50 };

/** The cgroup2 mount, and a test group in it, when this process may make groups there. */
async function writableCgroup2(): Promise<{ mount: string; base: string } | { why: string }> {
  let mount: string | undefined;
  try {
    mount = cgroup2Mount(await Deno.readTextFile("/proc/self/mountinfo"));
  } catch (err) {
    return { why: `cannot read mountinfo: ${(err as Error).message}` };
  }
  if (!mount) return { why: "no cgroup2 mount" };
  const base = join(mount, `omotai-scope-test-${crypto.randomUUID().slice(0, 8)}`);
  try {
    await Deno.mkdir(base);
    return { mount, base };
  } catch (err) {
    return { why: `cgroup2 at ${mount} is not writable: ${(err as Error).message}` };
  }
}

const place = await writableCgroup2();
const ignore = "why" in place;
if ("why" in place) console.error(`systemd scope tests skipped: ${place.why}`);

/**
 * A fake `systemd-run` in a temp dir: records its argv (one per line) and its pid in `log`,
 * then, when `base` is given, makes `<base>/<unit>` and moves itself in, as systemd does with
 * the caller of `systemd-run --scope`, and execs the command after `--`.
 */
async function fakeSystemdRun(dir: string, base: string | undefined): Promise<string> {
  const path = join(dir, "systemd-run");
  const log = join(dir, "argv.log");
  const placeIt = base === undefined
    ? ""
    : `mkdir "${base}/$unit" && echo $$ > "${base}/$unit/cgroup.procs" || exit 71\n`;
  await Deno.writeTextFile(
    path,
    `#!/bin/sh
[ "$1" = --version ] && { echo "systemd 255 (fake)"; exit 0; }
echo "pid $$" > "${log}"
unit=
for a in "$@"; do
  printf 'arg %s\\n' "$a" >> "${log}"
  case "$a" in --unit=*) unit=\${a#--unit=};; esac
done
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do shift; done
shift
${placeIt}exec "$@"
`,
    { mode: 0o755 },
  );
  return path;
}

function recorded(dir: string): { pid: number; args: string[] } {
  const lines = Deno.readTextFileSync(join(dir, "argv.log")).split("\n").filter(Boolean);
  return {
    pid: Number(lines[0]!.slice("pid ".length)),
    args: lines.slice(1).map((l) => l.slice("arg ".length)),
  };
}

async function world(base: string | undefined) {
  const dir = await Deno.makeTempDir({ prefix: "omotai-systemd-run-" });
  const systemdRun = await fakeSystemdRun(dir, base);
  const host: SystemdHost = {
    systemdRun,
    user: false,
    mount: (place as { mount: string }).mount,
    // What the host's cgroup2 root really offers (on a hybrid host: nothing, so no bound is
    // there to check; on a v2 host the scope's files would be checked and found unset).
    controllers:
      (await Deno.readTextFile(join((place as { mount: string }).mount, "cgroup.controllers")))
        .trim().split(/\s+/).filter(Boolean),
    env: {},
    version: 255,
  };
  const scopes = new SystemdScopes({ host, instance: "t1", limits: LIMITS, log: () => {} });
  const profiles = await ProfileStore.open(dir);
  return { dir, scopes, profiles };
}

Deno.test({
  name:
    "SystemdScopes: a real browser starts under systemd-run with its bounds, all of it in the scope",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const { base } = place as { base: string };
    const w = await world(base);
    const logs: string[] = [];
    try {
      const started = await startBrowser({
        profiles: w.profiles,
        executable: findBrowser(Deno.env.get("OMOTAI_BROWSER")),
        groups: w.scopes,
        nice: findNice(),
        log: (l) => logs.push(l),
      }, () => Promise.resolve(undefined));
      const scope = started.group as Awaited<ReturnType<SystemdScopes["create"]>>;
      try {
        // The browser runs and answers.
        const version = await started.browser.connection.root.send("Browser.getVersion");
        assert.match(version.product, /Chrome|HeadlessChrome/);
        // The argv carried the bounds, outermost, then nice and the browser.
        const { pid, args } = recorded(w.dir);
        assert.equal(pid, started.browser.pid, "systemd-run --scope execs the command itself");
        const dash = args.indexOf("--");
        assert.deepEqual(args.slice(0, dash + 1), [
          "--scope",
          "--quiet",
          "--collect",
          `--unit=${scope.unit}`,
          "-p",
          `MemoryMax=${LIMITS.memoryBytes}`,
          "-p",
          "MemorySwapMax=0",
          "-p",
          "TasksMax=1024",
          "-p",
          "CPUWeight=50",
          "-p",
          "OOMPolicy=continue",
          "--",
        ]);
        assert.equal(args[dash + 1], findNice());
        // The runtime found the scope's group from the browser's /proc/<pid>/cgroup.
        assert.equal(scope.dir, join(base, scope.unit));
        // A page's renderer starts inside it too: every process of the browser is there.
        const target = await started.browser.connection.root.send("Target.createTarget", {
          url: "data:text/html,<title>in scope</title><p>hello</p>",
        });
        assert.ok(target.targetId);
        const procs = async () =>
          (await Deno.readTextFile(join(scope.dir!, "cgroup.procs"))).split("\n").filter(Boolean)
            .map(Number);
        assert.ok((await procs()).includes(started.browser.pid!));
        assert.ok(
          await eventually(async () => (await procs()).length >= 3),
          `the browser's processes in its scope: ${await procs()}`,
        );
        for (const p of await procs()) {
          // Each one is a process of this browser (its pid's children), nothing else.
          const cmd = await Deno.readTextFile(`/proc/${p}/cmdline`).catch(() => "");
          assert.ok(cmd === "" || /chrom/i.test(cmd), `a stranger in the scope: ${cmd}`);
        }
        assert.equal(await scope.checkOom(), 0);
      } finally {
        await started.browser.close();
      }
      // The group's processes are gone with the browser; the test removes it (systemd would
      // collect the unit).
      assert.ok(
        await eventually(async () =>
          (await Deno.readTextFile(join(scope.dir!, "cgroup.procs"))).trim() === ""
        ),
      );
      // The kernel lets go of a group a moment after its last process (EBUSY meanwhile).
      assert.ok(
        await eventually(() => Deno.remove(scope.dir!).then(() => true, () => false)),
        `${scope.dir} stayed busy`,
      );
    } finally {
      await Deno.remove(w.dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name: "SystemdScopes: a browser that did not start in its scope is ended and its launch fails",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const w = await world(undefined);
    try {
      const err = await startBrowser({
        profiles: w.profiles,
        executable: findBrowser(Deno.env.get("OMOTAI_BROWSER")),
        groups: w.scopes,
        log: () => {},
      }, () => Promise.resolve(undefined)).then(() => undefined, (e) => e);
      assert.ok(err instanceof OmotaiError, String(err));
      assert.equal(err.code, "BROWSER_LAUNCH_FAILED");
      assert.match(err.message, /did not start in its scope omotai-t1-[0-9a-f]{8}-b1\.scope/);
      // The browser did start (systemd-run ran it): it is ended, not left unbounded.
      const { pid } = recorded(w.dir);
      assert.ok(
        await eventually(async () =>
          !(await Deno.readTextFile(`/proc/${pid}/stat`).then(
            (s) => !/^\d+ \(.*\) Z/.test(s),
            () => false,
          ))
        ),
        `browser ${pid} still runs`,
      );
    } finally {
      await Deno.remove(w.dir, { recursive: true }).catch(() => {});
    }
  },
});

addEventListener("unload", () => {
  if ("base" in place) {
    try {
      Deno.removeSync(place.base);
    } catch {
      // A group left by a failed run: empty, removable with rmdir.
    }
  }
});
