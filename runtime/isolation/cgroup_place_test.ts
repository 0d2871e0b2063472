import assert from "node:assert/strict";
import { type CgroupLookup, describePlace, locateCgroups } from "./cgroup_place.ts";

/** A machine described by its /proc/self/cgroup, mountinfo and cgroup.controllers files. */
function machine(
  procCgroup: string,
  mounts: string[],
  controllers: Record<string, string> = {},
): CgroupLookup {
  return {
    procCgroup: () => Promise.resolve(procCgroup),
    mountinfo: () => Promise.resolve(mounts.join("\n")),
    read: (path) => Promise.resolve(controllers[path]),
  };
}

const V2_MOUNT =
  "35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw";
/** This machine's kind: v1 controllers beside a cgroup2 mount with hugetlb only. */
const HYBRID_MOUNTS = [
  "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
  "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu",
  "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
  "38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids",
  "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
];
const HYBRID_CGROUP = [
  "8:pids:/",
  "4:memory:/process_api/979a",
  "1:cpu:/",
  "0::/",
].join("\n");

Deno.test("locateCgroups() on cgroup v2 makes the groups beside the runtime's own (no internal processes)", async () => {
  const found = await locateCgroups(machine(
    "0::/system.slice/omotai.service/runtime\n",
    [V2_MOUNT],
    { "/sys/fs/cgroup/system.slice/omotai.service/cgroup.controllers": "cpu io memory pids\n" },
  ));
  assert.equal("place" in found && describePlace(found.place), "cgroup v2");
  assert.deepEqual(found, {
    place: {
      backend: "v2",
      dir: "/sys/fs/cgroup/system.slice/omotai.service",
      controllers: ["memory", "pids", "cpu"],
    },
  });
});

Deno.test("locateCgroups() on cgroup v2 in the root cgroup makes them under the root", async () => {
  const found = await locateCgroups(machine("0::/\n", [V2_MOUNT], {
    "/sys/fs/cgroup/cgroup.controllers": "memory pids",
  }));
  assert.deepEqual(found, {
    place: { backend: "v2", dir: "/sys/fs/cgroup", controllers: ["memory", "pids"] },
  });
});

Deno.test("locateCgroups() on a hybrid host uses v1's memory, pids and cpu groups of the runtime", async () => {
  const found = await locateCgroups(machine(HYBRID_CGROUP, HYBRID_MOUNTS, {
    "/sys/fs/cgroup/unified/cgroup.controllers": "hugetlb\n",
  }));
  assert.equal("place" in found && describePlace(found.place), "cgroup v1 (hybrid host)");
  assert.deepEqual(found, {
    place: {
      backend: "v1",
      dirs: {
        memory: "/sys/fs/cgroup/memory/process_api/979a",
        pids: "/sys/fs/cgroup/pids",
        cpu: "/sys/fs/cgroup/cpu",
      },
    },
  });
});

Deno.test("locateCgroups() follows a container's mount of a hierarchy's subtree", async () => {
  const found = await locateCgroups(machine("4:memory:/docker/abc/app\n", [
    "34 30 0:31 /docker/abc /sys/fs/cgroup/memory ro,relatime - cgroup cgroup rw,memory",
  ]));
  assert.deepEqual(found, {
    place: { backend: "v1", dirs: { memory: "/sys/fs/cgroup/memory/app" } },
  });
});

Deno.test("locateCgroups() says why there is none in one line", async () => {
  const hugetlbOnly = await locateCgroups(machine("0::/\n", [V2_MOUNT], {
    "/sys/fs/cgroup/cgroup.controllers": "hugetlb",
  }));
  assert.deepEqual(hugetlbOnly, {
    reason:
      "cgroup2 has no memory and pids controllers for /sys/fs/cgroup (it has: hugetlb), and no cgroup v1 memory hierarchy",
  });
  const nothing = await locateCgroups(machine("", []));
  assert.deepEqual(nothing, { reason: "no cgroup2 mount, and no cgroup v1 memory hierarchy" });
  const unreadable = await locateCgroups({
    procCgroup: () => Promise.reject(new Error("denied")),
    mountinfo: () => Promise.resolve(""),
    read: () => Promise.resolve(undefined),
  });
  assert.deepEqual(unreadable, { reason: "cannot read this process's cgroups (denied)" });
});

Deno.test("locateCgroups() reads the real machine without failing", async () => {
  const found = await locateCgroups();
  assert.ok("place" in found || found.reason.length > 0);
});
