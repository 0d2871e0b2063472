import assert from "node:assert/strict";
import { detectIsolation, type IsolationFact, withoutNamespace } from "./detect.ts";
import { hiddenRoot, NetnsIsolation, proxyPortOf, sandboxCommand } from "./netns.ts";

const FACT: IsolationFact = {
  kind: "netns",
  sandbox: true,
  user: { name: "omotai-browser", uid: 999, gid: 995 },
  tools: { bwrap: "/usr/bin/bwrap", socat: "/usr/bin/socat", setpriv: "/usr/bin/setpriv" },
};

/** The value after each occurrence of `flag` (bubblewrap's one- and two-argument options). */
function after(args: string[], flag: string, n = 1): string[][] {
  const out: string[][] = [];
  args.forEach((a, i) => {
    if (a === flag) out.push(args.slice(i + 1, i + 1 + n));
  });
  return out;
}

Deno.test("sandboxCommand() unshares the network, drops to the browser user, bridges the socket", () => {
  const cmd = sandboxCommand(FACT, {
    profileDir: "/root/.local/state/omotai/profiles/i1/s1",
    dataDir: "/root/.local/state/omotai",
    proxy: { socket: "/root/.local/state/omotai/profiles/i1/egress/l3/proxy.sock", port: 30003 },
  });
  assert.equal(cmd[0], "/usr/bin/bwrap");
  for (const f of ["--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session"]) {
    assert.ok(cmd.includes(f), f);
  }
  // Nothing of the host is writable but the profile and the socket's directory.
  assert.deepEqual(after(cmd, "--bind", 2), [
    ["/root/.local/state/omotai/profiles/i1/s1", "/root/.local/state/omotai/profiles/i1/s1"],
    ["/root/.local/state/omotai/profiles/i1/egress/l3", "/tmp/omotai/egress"],
  ]);
  assert.deepEqual(after(cmd, "--ro-bind", 2), [["/", "/"]]);
  // /root (and so the data dir) is empty inside; the way down to the profile is made.
  assert.deepEqual(after(cmd, "--tmpfs"), [["/tmp"], ["/run"], ["/root"]]);
  assert.deepEqual(after(cmd, "--dir").map(([d]) => d), [
    "/root/.local",
    "/root/.local/state",
    "/root/.local/state/omotai",
    "/root/.local/state/omotai/profiles",
    "/root/.local/state/omotai/profiles/i1",
    "/tmp/omotai",
  ]);
  const setpriv = cmd.indexOf("/usr/bin/setpriv");
  assert.ok(setpriv > cmd.indexOf("--"), "setpriv runs inside the sandbox");
  assert.deepEqual(cmd.slice(setpriv + 1, setpriv + 6), [
    "--reuid=999",
    "--regid=995",
    "--clear-groups",
    "--inh-caps=-all",
    "--bounding-set=-all",
  ]);
  // The forwarder's port is the script's first argument; the program comes after it.
  assert.equal(cmd.at(-1), "30003");
  assert.match(cmd.at(-3)!, /socat "TCP-LISTEN:\$port,bind=127\.0\.0\.1,fork,reuseaddr"/);
  assert.match(cmd.at(-3)!, /UNIX-CONNECT:\/tmp\/omotai\/egress\/proxy\.sock/);
});

Deno.test("sandboxCommand() without a browser user runs no setpriv; without a proxy no forwarder", () => {
  const cmd = sandboxCommand({ ...FACT, user: undefined }, {
    profileDir: "/tmp/d/profiles/i1/s1",
    dataDir: "/tmp/d",
  });
  assert.ok(!cmd.some((a) => a.includes("setpriv")));
  assert.equal(cmd.at(-1), "");
  assert.deepEqual(after(cmd, "--tmpfs"), [["/tmp"], ["/run"]]);
  assert.deepEqual(after(cmd, "--dir").map(([d]) => d), [
    "/tmp/d",
    "/tmp/d/profiles",
    "/tmp/d/profiles/i1",
  ]);
});

Deno.test("sandboxCommand() refuses a fact without a namespace", () => {
  assert.throws(
    () => sandboxCommand({ kind: "none", reason: "no", sandbox: true }, { profileDir: "/p" }),
    { code: "ISOLATION_UNAVAILABLE" },
  );
});

Deno.test("hiddenRoot() hides the data dir's top directory, or the data dir under system ones", () => {
  assert.equal(hiddenRoot("/root/.local/state/omotai"), "/root");
  assert.equal(hiddenRoot("/home/me/.local/state/omotai"), "/home");
  assert.equal(hiddenRoot("/data"), "/data");
  assert.equal(hiddenRoot("/var/lib/omotai"), "/var/lib/omotai");
  assert.equal(hiddenRoot("/tmp/omotai-x"), undefined);
  // A browser kept under the top directory keeps it visible: only the data dir goes.
  assert.equal(hiddenRoot("/home/me/data", ["/home/me/chrome/chrome"]), "/home/me/data");
});

Deno.test("proxyPortOf() reads the loopback proxy port of a browser's flags", () => {
  assert.equal(proxyPortOf(["--a", "--proxy-server=http://127.0.0.1:30001"]), 30001);
  assert.equal(proxyPortOf(["--proxy-server=http://10.0.0.1:3128"]), undefined);
  assert.equal(proxyPortOf([]), undefined);
});

Deno.test("NetnsIsolation.prepare() refuses a proxy port with no socket behind it", async () => {
  const iso = new NetnsIsolation({ fact: { ...FACT, user: undefined }, socketOf: () => undefined });
  await assert.rejects(
    iso.prepare({
      executable: "/usr/bin/chromium",
      profileDir: "/tmp/p",
      args: ["--proxy-server=http://127.0.0.1:40000"],
    }),
    { code: "ISOLATION_FAILED" },
  );
});

Deno.test("NetnsIsolation.prepare() wraps the launch and applies the test hook last", async () => {
  const iso = new NetnsIsolation({
    fact: { ...FACT, user: undefined },
    socketOf: (p) => p === 30001 ? "/tmp/s/l1/proxy.sock" : undefined,
    testArgs: (a) => a.filter((x) => !x.startsWith("--proxy-server=")),
  });
  const out = await iso.prepare({
    executable: "/usr/bin/chromium",
    profileDir: await Deno.makeTempDir(),
    args: ["--proxy-server=http://127.0.0.1:30001", "--x"],
  });
  assert.deepEqual(out.args, ["--x"]);
  assert.equal(out.wrap.command.at(-1), "30001", "the forwarder still runs");
  assert.equal(out.wrap.sandbox, true);
});

Deno.test("detectIsolation() says why not, in one line", async () => {
  const base = {
    uid: 1000,
    which: (n: string) => `/usr/bin/${n}`,
    probe: () => Promise.resolve(undefined),
  };
  assert.equal(
    (await detectIsolation({ ...base, os: "darwin" })).reason,
    "network namespaces need Linux (this is darwin)",
  );
  assert.match(
    (await detectIsolation({
      ...base,
      os: "linux",
      which: (n) => n === "socat" ? "/usr/bin/socat" : undefined,
    })).reason!,
    /bubblewrap is not installed/,
  );
  const off = await detectIsolation({
    ...base,
    os: "linux",
    probe: () => Promise.resolve("setting up uid map: Permission denied"),
  });
  assert.equal(off.kind, "none");
  assert.match(off.reason!, /cannot create a namespace here: setting up uid map/);
  assert.equal(
    (await detectIsolation({ ...base, os: "linux", mode: "off" })).reason,
    "isolation turned off",
  );
  const ok = await detectIsolation({ ...base, os: "linux" });
  assert.equal(ok.kind, "netns");
  assert.equal(ok.user, undefined, "a normal user's browser runs as that user");
  assert.equal(ok.sandbox, true);
});

Deno.test("detectIsolation() as root finds the browser user, or says the sandbox is off", async () => {
  const passwd =
    "root:x:0:0::/root:/bin/sh\nomotai-browser:x:999:995::/nonexistent:/usr/sbin/nologin\n";
  const base = {
    os: "linux" as const,
    uid: 0,
    which: (n: string) => `/usr/bin/${n}`,
    probe: () => Promise.resolve(undefined),
  };
  const found = await detectIsolation({ ...base, passwd: () => passwd });
  assert.deepEqual(found.user, { name: "omotai-browser", uid: 999, gid: 995 });
  assert.equal(found.sandbox, true);
  const missing = await detectIsolation({ ...base, passwd: () => "root:x:0:0::/root:/bin/sh\n" });
  assert.equal(missing.kind, "netns");
  assert.equal(missing.sandbox, false);
  assert.match(missing.reason!, /no omotai-browser user/);
  await assert.rejects(detectIsolation({ ...base, passwd: () => passwd, browserUser: "nope" }), {
    code: "BROWSER_USER_UNKNOWN",
  });
  await assert.rejects(detectIsolation({ ...base, passwd: () => passwd, browserUser: "root" }), {
    code: "BROWSER_USER_INVALID",
  });
  assert.equal(
    (await detectIsolation({ ...base, passwd: () => passwd, browserUser: "999" })).user?.name,
    "omotai-browser",
  );
});

Deno.test("withoutNamespace(): no namespace, no uid switch, so a root runtime's browser has no sandbox", () => {
  assert.deepEqual(withoutNamespace(FACT, "--headful"), {
    kind: "none",
    reason: "--headful",
    sandbox: false,
  });
  assert.equal(withoutNamespace({ ...FACT, user: undefined }, "x").sandbox, true);
});

Deno.test("NetnsIsolation.stage() copies chosen files into the profile, the browser's to read", async () => {
  const iso = new NetnsIsolation({ fact: { ...FACT, user: undefined }, socketOf: () => undefined });
  const uploads = await Deno.makeTempDir();
  const profile = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${uploads}/a`);
    await Deno.writeTextFile(`${uploads}/a/cv.pdf`, "one");
    await Deno.writeTextFile(`${uploads}/cv.pdf`, "two");
    const staged = await iso.stage(profile, [`${uploads}/a/cv.pdf`, `${uploads}/cv.pdf`]);
    const real = await Deno.realPath(profile);
    assert.equal(staged.length, 2);
    for (const path of staged) {
      assert.ok(path.startsWith(`${real}/omotai-uploads/`), path);
      assert.ok(path.endsWith("/cv.pdf"), "the name the page sees is the file's own");
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    }
    assert.notEqual(staged[0], staged[1], "two files of one name stay two files");
    assert.deepEqual(
      await Promise.all(staged.map((p) => Deno.readTextFile(p))),
      ["one", "two"],
    );
  } finally {
    await Deno.remove(uploads, { recursive: true });
    await Deno.remove(profile, { recursive: true });
  }
});
