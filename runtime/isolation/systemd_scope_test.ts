import assert from "node:assert/strict";
import { join } from "node:path";
import {
  detectSystemd,
  scopeCommand,
  type SystemdHost,
  type SystemdLocation,
  SystemdScopes,
} from "./systemd_scope.ts";
import { describeCgroup, openBrowserGroups } from "./cgroup_backend.ts";
import { type CgroupFs, kernelFs } from "./cgroup_shell.ts";
import type { CgroupLookup } from "./cgroup_place.ts";

const LIMITS = { memoryBytes: 512 * 2 ** 20, pids: 1024, cpuWeight: 50 };

/**
 * A temp directory standing for `/` of a host: `run/systemd/system` when `systemd`, a fake
 * `usr/bin/systemd-run` when `installed`, a cgroup2 mount at `sys/fs/cgroup` whose root (and
 * user 1000's manager) offers `controllers`, and the user manager's socket when `userManager`.
 */
async function fakeHost(
  options: { systemd?: boolean; installed?: boolean; controllers?: string; userManager?: boolean },
): Promise<{ root: string; lookup: CgroupLookup; cleanup(): Promise<void> }> {
  const root = await Deno.makeTempDir({ prefix: "omotai-systemd-host-" });
  const mount = join(root, "sys/fs/cgroup");
  const userDir = join(mount, "user.slice/user-1000.slice/user@1000.service");
  await Deno.mkdir(userDir, { recursive: true });
  const controllers = options.controllers ?? "cpuset cpu io memory pids";
  await Deno.writeTextFile(join(mount, "cgroup.controllers"), `${controllers}\n`);
  await Deno.writeTextFile(join(userDir, "cgroup.controllers"), `${controllers}\n`);
  if (options.systemd !== false) {
    await Deno.mkdir(join(root, "run/systemd/system"), { recursive: true });
  }
  if (options.installed !== false) {
    await Deno.mkdir(join(root, "usr/bin"), { recursive: true });
    await Deno.writeTextFile(join(root, "usr/bin/systemd-run"), "#!/bin/sh\n", { mode: 0o755 });
  }
  if (options.userManager) {
    await Deno.mkdir(join(root, "run/user/1000/systemd"), { recursive: true });
    await Deno.writeTextFile(join(root, "run/user/1000/systemd/private"), "");
  }
  const lookup: CgroupLookup = {
    procCgroup: () => Promise.resolve("0::/system.slice/omotai.service\n"),
    mountinfo: () =>
      Promise.resolve(
        `30 22 0:27 / ${mount} rw,nosuid - cgroup2 cgroup2 rw\n29 1 0:26 / / rw - ext4 /dev/sda1 rw\n`,
      ),
    read: (path) => kernelFs.read(path).catch(() => undefined),
  };
  return { root, lookup, cleanup: () => Deno.remove(root, { recursive: true }) };
}

const version = () => Promise.resolve(255);

Deno.test("detectSystemd() is not running where /run/systemd/system is absent", async () => {
  const host = await fakeHost({ systemd: false });
  try {
    const found = await detectSystemd({ root: host.root, lookup: host.lookup, uid: 0, version });
    assert.deepEqual(found, { running: false });
  } finally {
    await host.cleanup();
  }
});

Deno.test("detectSystemd() finds the system manager's scopes for root, with their controllers", async () => {
  const host = await fakeHost({});
  try {
    const found = await detectSystemd({ root: host.root, lookup: host.lookup, uid: 0, version });
    assert.deepEqual(found, {
      running: true,
      host: {
        systemdRun: join(host.root, "usr/bin/systemd-run"),
        user: false,
        mount: join(host.root, "sys/fs/cgroup"),
        controllers: ["cpuset", "cpu", "io", "memory", "pids"],
        env: {},
        version: 255,
      },
    });
  } finally {
    await host.cleanup();
  }
});

Deno.test("detectSystemd() says why there are no scopes, in one line", async () => {
  const missing = await fakeHost({ installed: false });
  const hybrid = await fakeHost({ controllers: "" });
  const noUser = await fakeHost({});
  try {
    const a = await detectSystemd({ root: missing.root, lookup: missing.lookup, uid: 0, version });
    assert.deepEqual(a, { running: true, reason: "systemd-run is not installed" });
    const b = await detectSystemd({ root: hybrid.root, lookup: hybrid.lookup, uid: 0, version });
    assert.ok("reason" in b);
    assert.match(b.reason, /^systemd's system manager has no memory and pids controllers/);
    const c = await detectSystemd({ root: noUser.root, lookup: noUser.lookup, uid: 1000, version });
    assert.deepEqual(c, {
      running: true,
      reason: "no systemd user manager runs for uid 1000 (loginctl enable-linger)",
    });
    const broken = await detectSystemd({
      root: noUser.root,
      lookup: noUser.lookup,
      uid: 0,
      version: () => Promise.reject(new Error("exit code 1")),
    });
    assert.ok("reason" in broken);
    assert.match(broken.reason, /systemd-run does not run here: exit code 1$/);
  } finally {
    await missing.cleanup();
    await hybrid.cleanup();
    await noUser.cleanup();
  }
});

Deno.test("detectSystemd() asks a user's own manager for a runtime that is not root", async () => {
  const host = await fakeHost({ userManager: true });
  try {
    const found = await detectSystemd({ root: host.root, lookup: host.lookup, uid: 1000, version });
    assert.ok("host" in found);
    assert.equal(found.host.user, true);
    assert.deepEqual(found.host.env, { XDG_RUNTIME_DIR: "/run/user/1000" });
    // The user's service's controllers (its Delegate=), not the root's.
    await Deno.writeTextFile(
      join(
        host.root,
        "sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/cgroup.controllers",
      ),
      "cpu\n",
    );
    const undelegated = await detectSystemd({
      root: host.root,
      lookup: host.lookup,
      uid: 1000,
      version,
    });
    assert.ok("reason" in undelegated);
    assert.match(undelegated.reason, /^systemd's user manager has no memory and pids controllers/);
  } finally {
    await host.cleanup();
  }
});

Deno.test("detectSystemd() reads systemd's version from systemd-run --version", async () => {
  const host = await fakeHost({});
  try {
    await Deno.writeTextFile(
      join(host.root, "usr/bin/systemd-run"),
      `#!/bin/sh\n[ "$1" = --version ] && echo "systemd 257 (257.9-1)" && echo "+PAM +AUDIT"\n`,
      { mode: 0o755 },
    );
    const found = await detectSystemd({ root: host.root, lookup: host.lookup, uid: 0 });
    assert.ok("host" in found);
    assert.equal(found.host.version, 257);
  } finally {
    await host.cleanup();
  }
});

Deno.test("scopeCommand() puts the browser's bounds on the scope as unit properties", () => {
  const base = { systemdRun: "/usr/bin/systemd-run", unit: "omotai-i-b1.scope", limits: LIMITS };
  assert.deepEqual(scopeCommand({ ...base, user: false, version: 252 }), [
    "/usr/bin/systemd-run",
    "--scope",
    "--quiet",
    "--collect",
    "--unit=omotai-i-b1.scope",
    "-p",
    "MemoryMax=536870912",
    "-p",
    "MemorySwapMax=0",
    "-p",
    "TasksMax=1024",
    "-p",
    "CPUWeight=50",
    "--",
  ]);
  // The user's manager; and from 253 on, a scope outlives an OOM kill so its count is read.
  const user = scopeCommand({ ...base, user: true, version: 253 });
  assert.deepEqual(user.slice(0, 6), [
    "/usr/bin/systemd-run",
    "--scope",
    "--quiet",
    "--collect",
    "--user",
    "--unit=omotai-i-b1.scope",
  ]);
  assert.deepEqual(user.slice(-3), ["-p", "OOMPolicy=continue", "--"]);
});

/** A cgroup2 mount in a temp dir with one scope's group, and `/proc/<pid>/cgroup` faked. */
async function fakeScope(
  files: Record<string, string>,
): Promise<
  { mount: string; fs: CgroupFs; setCgroup(path: string): void; cleanup(): Promise<void> }
> {
  const mount = await Deno.makeTempDir({ prefix: "omotai-scope-" });
  let cgroup = "";
  const fs: CgroupFs = {
    ...kernelFs,
    read: (path) =>
      /^\/proc\/\d+\/cgroup$/.test(path) ? Promise.resolve(cgroup) : kernelFs.read(path),
  };
  return {
    mount,
    fs,
    setCgroup(path) {
      cgroup = `0::${path}\n`;
      const dir = join(mount, path);
      Deno.mkdirSync(dir, { recursive: true });
      for (const [f, text] of Object.entries(files)) Deno.writeTextFileSync(join(dir, f), text);
    },
    cleanup: () => Deno.remove(mount, { recursive: true }),
  };
}

function hostAt(mount: string, controllers = ["memory", "pids", "cpu"]): SystemdHost {
  return {
    systemdRun: "/usr/bin/systemd-run",
    user: false,
    mount,
    controllers,
    env: {},
    version: 252,
  };
}

const BOUND = {
  "memory.max": "536870912\n",
  "memory.swap.max": "0\n",
  "pids.max": "1024\n",
  "cpu.weight": "50\n",
  "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n",
  "cgroup.kill": "",
};

Deno.test("SystemdScope.started() finds the browser's scope and reads its OOM count there", async () => {
  const f = await fakeScope(BOUND);
  try {
    const scopes = new SystemdScopes({
      host: hostAt(f.mount),
      instance: "i/1",
      limits: LIMITS,
      log: () => {},
      fs: f.fs,
    });
    const scope = await scopes.create();
    assert.match(scope.unit, /^omotai-i_1-[0-9a-f]{8}-b1\.scope$/);
    assert.deepEqual(scope.wrap.slice(-2), ["CPUWeight=50", "--"]);
    assert.equal(await scope.checkOom(), 0, "no group known yet: nothing counted");
    f.setCgroup(`/system.slice/${scope.unit}`);
    await scope.started(4242);
    assert.equal(scope.dir, join(f.mount, "system.slice", scope.unit));
    await Deno.writeTextFile(join(scope.dir!, "memory.events"), "oom 1\noom_kill 1\n");
    assert.equal(await scope.checkOom(), 1);
    assert.equal(await scope.kill(), true);
    assert.equal(Deno.readTextFileSync(join(scope.dir!, "cgroup.kill")).trim(), "1");
    // The unit is gone with its processes (--collect); its count stays.
    await Deno.remove(scope.dir!, { recursive: true });
    await scopes.close();
    assert.equal(await scope.checkOom(), 1);
    assert.equal(scope.oomKills(), 1);
  } finally {
    await f.cleanup();
  }
});

Deno.test("SystemdScope.started() refuses a browser outside its scope, or a scope unbounded", async () => {
  const f = await fakeScope(BOUND);
  const loose = await fakeScope({ ...BOUND, "memory.max": "max\n" });
  const bare = await fakeScope({ "pids.max": "1024\n" });
  try {
    const scopes = new SystemdScopes({
      host: hostAt(f.mount),
      instance: "i",
      limits: LIMITS,
      log: () => {},
      fs: f.fs,
    });
    const elsewhere = await scopes.create();
    f.setCgroup("/system.slice/omotai.service");
    await assert.rejects(
      elsewhere.started(4242),
      /did not start in its scope .* is \/system\.slice\/omotai\.service/,
    );
    await assert.rejects(elsewhere.started(undefined), /no pid/);
    const l = await new SystemdScopes({
      host: hostAt(loose.mount),
      instance: "i",
      limits: LIMITS,
      log: () => {},
      fs: loose.fs,
    }).create();
    loose.setCgroup(`/system.slice/${l.unit}`);
    await assert.rejects(l.started(1), /has memory\.max max, not 536870912/);
    const b = await new SystemdScopes({
      host: hostAt(bare.mount),
      instance: "i",
      limits: LIMITS,
      log: () => {},
      fs: bare.fs,
    }).create();
    bare.setCgroup(`/system.slice/${b.unit}`);
    await assert.rejects(b.started(1), /has no memory\.max: unbounded/);
    // A manager without the memory controller is not asked for memory.max (never chosen so:
    // detectSystemd refuses it; only a forced backend gets here).
    const c = await new SystemdScopes({
      host: hostAt(bare.mount, []),
      instance: "i",
      limits: LIMITS,
      log: () => {},
      fs: bare.fs,
    }).create();
    bare.setCgroup(`/system.slice/${c.unit}`);
    await c.started(1);
  } finally {
    await f.cleanup();
    await loose.cleanup();
    await bare.cleanup();
  }
});

/** A cgroup2 hierarchy in a temp dir where the runtime's parent `parent` is writable. */
async function fakeV2(
  parent: string,
): Promise<{ root: string; fs: CgroupFs; lookup: CgroupLookup }> {
  const root = await Deno.makeTempDir({ prefix: "omotai-cgroup2-" });
  const dir = join(root, parent);
  await Deno.mkdir(join(dir, "runtime"), { recursive: true });
  await Deno.writeTextFile(join(dir, "cgroup.controllers"), "cpu memory pids\n");
  await Deno.writeTextFile(join(dir, "cgroup.subtree_control"), "");
  const fs: CgroupFs = {
    ...kernelFs,
    async mkdir(path) {
      await kernelFs.mkdir(path);
      for (
        const f of [
          "cgroup.subtree_control",
          "memory.max",
          "memory.oom.group",
          "pids.max",
          "cpu.weight",
        ]
      ) {
        await Deno.writeTextFile(join(path, f), "", { createNew: true }).catch(() => {});
      }
    },
    rmdir: (path) => Deno.remove(path, { recursive: true }),
  };
  const lookup: CgroupLookup = {
    procCgroup: () => Promise.resolve(`0::/${parent}/runtime\n`),
    mountinfo: () => Promise.resolve(`35 24 0:30 / ${root} rw - cgroup2 cgroup2 rw`),
    read: (path) => kernelFs.read(path).catch(() => undefined),
  };
  return { root, fs, lookup };
}

const SYSTEMD_HOST: SystemdLocation = { running: true, host: hostAt("/sys/fs/cgroup") };

Deno.test("openBrowserGroups() under systemd writes only a delegated subtree, else asks systemd", async () => {
  const slice = await fakeV2("system.slice");
  const unit = await fakeV2("system.slice/omotai.service");
  try {
    const base = { instance: "i1", limits: LIMITS, log: () => {} };
    // systemd's own slice: not the runtime's to write, though it could.
    const scoped = await openBrowserGroups({
      ...base,
      fs: slice.fs,
      lookup: slice.lookup,
      systemd: () => Promise.resolve(SYSTEMD_HOST),
    });
    assert.deepEqual(scoped.fact, { backend: "systemd", manager: "system", limits: LIMITS });
    assert.ok(scoped.groups instanceof SystemdScopes);
    assert.deepEqual(
      [...Deno.readDirSync(join(slice.root, "system.slice"))].map((e) => e.name).sort(),
      [
        "cgroup.controllers",
        "cgroup.subtree_control",
        "runtime",
      ],
      "nothing made in systemd's slice",
    );
    // A unit that delegates (the runtime in a sub-group of omotai.service): cgroupfs, as before.
    const own = await openBrowserGroups({
      ...base,
      fs: unit.fs,
      lookup: unit.lookup,
      systemd: () => Promise.resolve(SYSTEMD_HOST),
    });
    assert.deepEqual(own.fact, { backend: "v2", limits: LIMITS });
    await own.groups!.close();
    // Not delegated, and systemd cannot make scopes: none, with both reasons.
    const neither = await openBrowserGroups({
      ...base,
      fs: slice.fs,
      lookup: slice.lookup,
      systemd: () => Promise.resolve({ running: true, reason: "systemd-run is not installed" }),
    });
    assert.deepEqual(neither.fact, {
      backend: "none",
      reason: `systemd did not delegate ${
        join(slice.root, "system.slice")
      } to the runtime; no systemd scopes: systemd-run is not installed`,
    });
    // Without systemd the same slice is written as before.
    const plain = await openBrowserGroups({ ...base, fs: slice.fs, lookup: slice.lookup });
    assert.equal(plain.fact.backend, "v2");
    await plain.groups!.close();
  } finally {
    await Deno.remove(slice.root, { recursive: true });
    await Deno.remove(unit.root, { recursive: true });
  }
});

Deno.test("describeCgroup() names systemd's scopes and whose manager makes them", () => {
  assert.equal(
    describeCgroup({ backend: "systemd", manager: "user", limits: LIMITS }),
    "cgroup v2 by systemd-run scope (user manager): memory 512 MiB without swap, 1024 pids, cpu weight 50",
  );
});
