import assert from "node:assert/strict";
import { join } from "node:path";
import { BROWSER_MEMORY_MB, BrowserGroups, defaultBrowserMemoryMb } from "./cgroup.ts";
import { openBrowserGroups } from "./cgroup_backend.ts";
import { type CgroupFs, kernelFs } from "./cgroup_shell.ts";
import type { CgroupLookup } from "./cgroup_place.ts";

const LIMITS = { memoryBytes: 512 * 2 ** 20, pids: 1024, cpuWeight: 50 };

/** The interface files the kernel puts into a new cgroup2 group (memory, pids, cpu). */
const V2_FILES: Record<string, string> = {
  "cgroup.procs": "",
  "cgroup.subtree_control": "",
  "cgroup.events": "populated 0\nfrozen 0\n",
  "cgroup.kill": "",
  "memory.max": "max\n",
  "memory.swap.max": "max\n",
  "memory.oom.group": "0\n",
  "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n",
  "memory.peak": "0\n",
  "pids.max": "max\n",
  "cpu.weight": "100\n",
};

/**
 * A temp directory laid out like a cgroup2 mount: the real shell operations, with a mkdir that
 * fills the group with the kernel's files and an rmdir that takes them along.
 */
async function fakeV2(): Promise<{ root: string; fs: CgroupFs; lookup: CgroupLookup }> {
  const root = await Deno.makeTempDir({ prefix: "omotai-cgroup2-" });
  await Deno.writeTextFile(join(root, "cgroup.controllers"), "cpuset cpu io memory pids\n");
  await Deno.writeTextFile(join(root, "cgroup.subtree_control"), "");
  await Deno.mkdir(join(root, "runtime"));
  const fs: CgroupFs = {
    ...kernelFs,
    async mkdir(path) {
      await kernelFs.mkdir(path);
      for (const [f, text] of Object.entries(V2_FILES)) {
        await Deno.writeTextFile(join(path, f), text, { createNew: true }).catch(() => {});
      }
    },
    rmdir: (path) => Deno.remove(path, { recursive: true }),
  };
  const lookup: CgroupLookup = {
    procCgroup: () => Promise.resolve("0::/runtime\n"),
    mountinfo: () => Promise.resolve(`35 24 0:30 / ${root} rw - cgroup2 cgroup2 rw`),
    read: (path) => kernelFs.read(path).catch(() => undefined),
  };
  return { root, fs, lookup };
}

const text = (path: string) => Deno.readTextFileSync(path).trim();

Deno.test("BrowserGroups on cgroup v2 hands the controllers down and bounds each browser's leaf", async () => {
  const { root, fs, lookup } = await fakeV2();
  try {
    const opened = await openBrowserGroups({
      instance: "i1",
      limits: LIMITS,
      log: () => {},
      fs,
      lookup,
    });
    assert.deepEqual(opened.fact, { backend: "v2", limits: LIMITS });
    assert.equal(text(join(root, "cgroup.subtree_control")), "+memory +pids +cpu");
    assert.equal(text(join(root, "omotai", "cgroup.subtree_control")), "+memory +pids +cpu");
    const instance = join(root, "omotai", "i1");
    assert.equal(text(join(instance, "cgroup.subtree_control")), "+memory +pids +cpu");
    assert.equal(text(join(instance, "cpu.weight")), "50");
    assert.ok(opened.groups instanceof BrowserGroups);
    const group = await opened.groups.create();
    const leaf = join(instance, "b1");
    assert.equal(group.dir, leaf);
    assert.equal(text(join(leaf, "memory.max")), String(512 * 2 ** 20));
    assert.equal(text(join(leaf, "memory.swap.max")), "0");
    assert.equal(text(join(leaf, "memory.oom.group")), "1");
    assert.equal(text(join(leaf, "pids.max")), "1024");
    assert.equal(text(join(leaf, "cpu.weight")), "50");
    // The runtime's own group is left as it was: nothing is moved.
    assert.deepEqual([...Deno.readDirSync(join(root, "runtime"))], []);
    await opened.groups!.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("BrowserGroup.wrap enters the group before it execs the program, same process", async () => {
  const { root, fs, lookup } = await fakeV2();
  try {
    const { groups } = await openBrowserGroups({
      instance: "i1",
      limits: LIMITS,
      log: () => {},
      fs,
      lookup,
    });
    assert.ok(groups instanceof BrowserGroups);
    const group = await groups.create();
    const [program, ...args] = group.wrap;
    const out = await new Deno.Command(program, { args: [...args, "/bin/sh", "-c", "echo $$"] })
      .output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const pid = new TextDecoder().decode(out.stdout).trim();
    assert.equal(text(join(group.dir, "cgroup.procs")), pid);
    await groups!.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("BrowserGroup.wrap refuses to run the program when it cannot enter the group", async () => {
  const { root, fs, lookup } = await fakeV2();
  try {
    const { groups } = await openBrowserGroups({
      instance: "i1",
      limits: LIMITS,
      log: () => {},
      fs,
      lookup,
    });
    assert.ok(groups instanceof BrowserGroups);
    const group = await groups.create();
    await Deno.remove(group.dir, { recursive: true });
    const [program, ...args] = group.wrap;
    const out = await new Deno.Command(program, { args: [...args, "/bin/echo", "ran"] }).output();
    assert.equal(out.code, 70);
    assert.equal(new TextDecoder().decode(out.stdout), "");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("BrowserGroup.checkOom() reads the kernel's count, and keeps it once the group is gone", async () => {
  const { root, fs, lookup } = await fakeV2();
  try {
    const { groups } = await openBrowserGroups({
      instance: "i1",
      limits: LIMITS,
      log: () => {},
      fs,
      lookup,
    });
    assert.ok(groups instanceof BrowserGroups);
    const group = await groups.create();
    assert.equal(await group.checkOom(), 0);
    await Deno.writeTextFile(join(group.dir, "memory.events"), "oom 1\noom_kill 2\n");
    assert.equal(group.oomKills(), 0, "as last counted");
    assert.equal(await group.checkOom(), 2);
    // A kill of everything in it is one write.
    assert.equal(await group.kill(), true);
    assert.equal(text(join(group.dir, "cgroup.kill")), "1");
    await group.remove();
    assert.equal(await Deno.stat(group.dir).then(() => true, () => false), false);
    assert.equal(await group.checkOom(), 2);
    assert.equal(group.oomKills(), 2);
    await groups!.close();
    assert.equal(await Deno.stat(join(root, "omotai", "i1")).then(() => true, () => false), false);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("openBrowserGroups() says in one line why there are none", async () => {
  const { root, fs, lookup } = await fakeV2();
  try {
    // A parent whose subtree_control the runtime may not write (not delegated).
    await Deno.remove(join(root, "cgroup.subtree_control"));
    const opened = await openBrowserGroups({
      instance: "i1",
      limits: LIMITS,
      log: () => {},
      fs,
      lookup,
    });
    assert.equal(opened.groups, undefined);
    assert.equal(opened.fact.backend, "none");
    assert.match(opened.fact.reason!, /^cgroup v2 is not writable here: .*cgroup\.subtree_control/);
    const off = await openBrowserGroups({
      mode: "off",
      instance: "i1",
      limits: LIMITS,
      log: () => {},
      fs,
      lookup,
    });
    assert.deepEqual(off.fact, { backend: "none", reason: "isolation turned off" });
    const mac = await openBrowserGroups({
      os: "darwin",
      instance: "i1",
      limits: LIMITS,
      log: () => {},
    });
    assert.deepEqual(mac.fact, { backend: "none", reason: "cgroups need Linux (this is darwin)" });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("BrowserGroups on cgroup v1 bounds memory and memory+swap alike, pids, and cpu.shares", async () => {
  const root = await Deno.makeTempDir({ prefix: "omotai-cgroup1-" });
  const V1: Record<string, string[]> = {
    memory: [
      "cgroup.procs",
      "memory.limit_in_bytes",
      "memory.memsw.limit_in_bytes",
      "memory.swappiness",
      "memory.oom_control",
    ],
    pids: ["cgroup.procs", "pids.max"],
    cpu: ["cgroup.procs", "cpu.shares"],
  };
  const fs: CgroupFs = {
    ...kernelFs,
    async mkdir(path) {
      await kernelFs.mkdir(path);
      const files = V1[path.slice(root.length + 1).split("/")[0]] ?? [];
      for (const f of files) {
        await Deno.writeTextFile(join(path, f), "", { createNew: true }).catch(() => {});
      }
    },
    rmdir: (path) => Deno.remove(path, { recursive: true }),
  };
  try {
    for (const c of Object.keys(V1)) await Deno.mkdir(join(root, c));
    const groups = await BrowserGroups.open({
      place: {
        backend: "v1",
        dirs: { memory: join(root, "memory"), pids: join(root, "pids"), cpu: join(root, "cpu") },
      },
      instance: "i1",
      limits: LIMITS,
      log: () => {},
      fs,
    });
    const group = await groups.create();
    const at = (c: string, f: string) => text(join(root, c, "omotai", "i1", "b1", f));
    assert.equal(at("memory", "memory.limit_in_bytes"), String(512 * 2 ** 20));
    assert.equal(at("memory", "memory.memsw.limit_in_bytes"), String(512 * 2 ** 20));
    assert.equal(at("memory", "memory.swappiness"), "0");
    assert.equal(at("pids", "pids.max"), "1024");
    assert.equal(at("cpu", "cpu.shares"), "512");
    assert.equal(text(join(root, "cpu", "omotai", "i1", "cpu.shares")), "512");
    // Every controller's cgroup.procs gets the pid.
    assert.deepEqual(group.wrap.slice(4), [
      "3",
      join(root, "memory", "omotai", "i1", "b1", "cgroup.procs"),
      join(root, "pids", "omotai", "i1", "b1", "cgroup.procs"),
      join(root, "cpu", "omotai", "i1", "b1", "cgroup.procs"),
    ]);
    await Deno.writeTextFile(
      join(group.dir, "memory.oom_control"),
      "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n",
    );
    assert.equal(await group.checkOom(), 1);
    // v1 has no cgroup.kill: the caller kills the browser's first process.
    assert.equal(await group.kill(), false);
    await groups.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("defaultBrowserMemoryMb() shares the memory less the runtime's reserve, within bounds", () => {
  assert.equal(defaultBrowserMemoryMb(17 * 2 ** 30, 8), 2048);
  assert.equal(defaultBrowserMemoryMb(24 * 2 ** 30, 1), BROWSER_MEMORY_MB.max);
  assert.equal(defaultBrowserMemoryMb(4 * 2 ** 30, 64), BROWSER_MEMORY_MB.min);
});
