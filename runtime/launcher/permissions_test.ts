import assert from "node:assert/strict";
import { BrowserLaunchError } from "../../cdp/errors.ts";
import { DETECT_READS, NICE_PATHS } from "../isolation/detect.ts";
import { parseCommandLine, spreadLists } from "./options.ts";
import { LaunchError } from "./permission_grants.ts";
import {
  childPermissions,
  LAUNCHER_ENV,
  type LaunchFacts,
  type PolicyRefs,
} from "./permissions.ts";

const DENO = "/opt/deno/bin/deno";
const BUNDLED = "/src/omotai/policies-wasm/dist";

/** Facts of a made-up machine: `policies` by absolute path, agents per database. */
function facts(
  options: {
    cwd?: string;
    env?: LaunchFacts["env"];
    policies?: Record<string, PolicyRefs>;
    agents?: Record<string, string[]>;
    browser?: string | null;
    real?: Record<string, string>;
  } = {},
): LaunchFacts {
  return {
    cwd: options.cwd ?? "/home/me/work",
    os: "linux",
    deno: DENO,
    bundledDir: BUNDLED,
    policiesDir: "/src/omotai/policies-wasm",
    env: options.env ?? { HOME: "/home/me" },
    readPolicy: (path) => options.policies?.[path],
    agentPolicies: (db) => options.agents?.[db] ?? [],
    browser: () => {
      if (options.browser === null) throw new BrowserLaunchError("no Chromium found");
      return options.browser ?? "/usr/bin/chromium";
    },
    realPath: (path) => options.real?.[path] ?? path,
  };
}

/** The value list of one `--allow-KIND=` flag, or undefined when it is absent. */
function allowed(flags: string[], kind: string): string[] | undefined {
  const flag = flags.find((f) => f.startsWith(`--allow-${kind}=`));
  return flag?.slice(`--allow-${kind}=`.length).split(",");
}

const STATE = "/home/me/.local/state/omotai";
const START_ENV = [
  "OMOTAI_DB",
  "LOG_TOKENS",
  "LOG_STREAM",
  "OMOTAI_BROWSER",
  "OMOTAI_HEADFUL",
  "OMOTAI_BROWSER_SHA256",
  "OMOTAI_ADMIN_TOKEN",
  "OMOTAI_DATABASE_URL",
  "OMOTAI_VAULT_KEY",
  "OMOTAI_VAULT_PASSPHRASE",
  "NODE_V8_COVERAGE",
];

Deno.test("childPermissions() grants read of the policy and its modules", () => {
  const policy = "/home/me/policies/p.yaml";
  const plan = childPermissions(
    ["start", "--policy", "../policies/p.yaml"],
    facts({
      policies: {
        [policy]: {
          modules: [{ path: "bundled:baseline" }, { path: "mine/m.wasm" }, { path: "/opt/x.wasm" }],
          upload_dir: "/home/me/uploads",
        },
      },
      real: { "/home/me/uploads": "/data/uploads" },
    }),
  );
  assert.deepEqual(plan.flags, [
    `--allow-read=${STATE},${BUNDLED},${policy},/home/me/policies/mine/m.wasm,` +
    `/home/me/policies/mine/m.wasm.sig.json,/opt/x.wasm,/opt/x.wasm.sig.json,` +
    `/home/me/uploads,/data/uploads,${NICE_PATHS.join(",")},${DETECT_READS.join(",")}`,
    `--allow-write=${STATE}`,
    `--allow-env=${START_ENV.join(",")}`,
    `--allow-run=/usr/bin/chromium,${DENO},${NICE_PATHS.join(",")},/bin/sh,/usr/bin/bwrap`,
    "--allow-sys=uid,systemMemoryInfo",
  ]);
  // The caller's words stay as they are (the child keeps the caller's directory); only the
  // data dir the runtime would otherwise look up is made explicit.
  assert.deepEqual(plan.args, ["start", "--data-dir", STATE, "--policy", "../policies/p.yaml"]);
  assert.deepEqual(plan.env, { OMOTAI_BROWSER: "/usr/bin/chromium" });
});

Deno.test("childPermissions() with --isolation off grants nothing isolation would use", () => {
  const f = facts();
  const auto = childPermissions(["start"], f).flags;
  const off = childPermissions(["start", "--isolation", "off"], f).flags;
  for (const p of DETECT_READS) {
    assert.ok(allowed(auto, "read")?.includes(p), p);
    assert.ok(!allowed(off, "read")?.includes(p), p);
  }
  assert.ok(allowed(auto, "run")?.includes("/usr/bin/bwrap"));
  assert.ok(!allowed(off, "run")?.includes("/usr/bin/bwrap"));
  // The shell that reaches cgroupfs, enters each browser's group and finds a hung renderer's
  // pid (Deno would need --allow-all for /sys and /proc/<pid>): run only, with isolation or
  // without (hang recovery needs it), and no read or write of /sys or /proc.
  assert.ok(allowed(auto, "run")?.includes("/bin/sh"));
  assert.ok(allowed(off, "run")?.includes("/bin/sh"));
  assert.ok(!allowed(auto, "read")?.some((p) => p.startsWith("/sys") || p.startsWith("/proc")));
  assert.ok(!allowed(auto, "write")?.some((p) => p.startsWith("/sys")));
});

Deno.test("childPermissions() grants systemd-run only where systemd runs the host, isolation on", () => {
  const plain = childPermissions(["start"], facts()).flags;
  assert.ok(!allowed(plain, "run")?.some((p) => p.endsWith("/systemd-run")));
  const host = { ...facts(), systemdRun: "/usr/bin/systemd-run" };
  const onSystemd = childPermissions(["start"], host).flags;
  assert.ok(allowed(onSystemd, "run")?.includes("/usr/bin/systemd-run"));
  const off = childPermissions(["start", "--isolation", "off"], host).flags;
  assert.ok(!allowed(off, "run")?.includes("/usr/bin/systemd-run"));
  // Only `start` starts browsers.
  const list = childPermissions(["agent", "list"], host).flags;
  assert.ok(!allowed(list, "run")?.includes("/usr/bin/systemd-run"));
});

Deno.test("childPermissions() gives a stdio start no network and sse only its listen address", () => {
  const f = facts();
  assert.equal(allowed(childPermissions(["start"], f).flags, "net"), undefined);
  assert.deepEqual(
    allowed(childPermissions(["start", "--mode", "sse", "--port", "9100"], f).flags, "net"),
    ["127.0.0.1:9100"],
  );
  assert.deepEqual(
    allowed(childPermissions(["start", "--mode=sse", "--host", "::1", "--port=0"], f).flags, "net"),
    ["[::1]:0"],
  );
  // The demo shop beside it (the port after --port), and the stdio console on its own port.
  assert.deepEqual(
    allowed(childPermissions(["start", "--mode", "sse", "--demo-site"], f).flags, "net"),
    ["127.0.0.1:8080", "127.0.0.1:8081"],
  );
  assert.deepEqual(
    allowed(childPermissions(["start", "--console", "--console-port", "0"], f).flags, "net"),
    ["127.0.0.1:0"],
  );
});

Deno.test("childPermissions() takes the data dir from --data-dir, OMOTAI_DATA_DIR, then XDG", () => {
  const rel = childPermissions(["agent", "list", "--data-dir", "state"], facts());
  assert.deepEqual(allowed(rel.flags, "write"), ["/home/me/work/state"]);
  assert.deepEqual(rel.args, ["agent", "list", "--data-dir", "state"]);
  const env = childPermissions(
    ["domain", "list"],
    facts({ env: { OMOTAI_DATA_DIR: "/srv/o", HOME: "/home/me" } }),
  );
  assert.deepEqual(allowed(env.flags, "write"), ["/srv/o"]);
  assert.deepEqual(env.args, ["domain", "list", "--data-dir", "/srv/o"]);
  const xdg = childPermissions(["audit", "verify"], facts({ env: { XDG_STATE_HOME: "/st" } }));
  assert.deepEqual(allowed(xdg.flags, "read"), ["/st/omotai"]);
  // Before a `--`, which would make it a positional.
  assert.deepEqual(
    childPermissions(["secret", "rm", "--", "-odd-id"], facts()).args,
    ["secret", "rm", "--data-dir", STATE, "--", "-odd-id"],
  );
});

Deno.test("childPermissions() grants OMOTAI_DB's own files when it lies outside the data dir", () => {
  const plan = childPermissions(
    ["grant", "list"],
    facts({ env: { HOME: "/home/me", OMOTAI_DB: "/var/db/o.db" } }),
  );
  const files = ["/var/db/o.db", "/var/db/o.db-wal", "/var/db/o.db-shm", "/var/db/o.db-journal"];
  assert.deepEqual(allowed(plan.flags, "read"), [STATE, ...files]);
  assert.deepEqual(allowed(plan.flags, "write"), [STATE, ...files]);
  assert.deepEqual(allowed(plan.flags, "env"), [
    "OMOTAI_DB",
    "LOG_TOKENS",
    "LOG_STREAM",
    "OMOTAI_DATABASE_URL",
  ]);
});

Deno.test("childPermissions() grants the policies of the database's agents to sse mode only", () => {
  const agentPolicy = "/etc/omotai/research.yaml";
  const f = facts({
    agents: { "/d/omotai.db": [agentPolicy] },
    policies: { [agentPolicy]: { modules: [{ path: "r.wasm" }] } },
  });
  const sse = allowed(
    childPermissions(["start", "--mode", "sse", "--data-dir", "/d"], f).flags,
    "read",
  );
  assert.deepEqual(sse, [
    "/d",
    BUNDLED,
    agentPolicy,
    "/etc/omotai/r.wasm",
    "/etc/omotai/r.wasm.sig.json",
    ...NICE_PATHS,
    ...DETECT_READS,
  ]);
  // stdio has no agents: its one client browses under --policy.
  const stdio = allowed(childPermissions(["start", "--data-dir", "/d"], f).flags, "read");
  assert.deepEqual(stdio, ["/d", BUNDLED, ...NICE_PATHS, ...DETECT_READS]);
});

Deno.test("childPermissions() grants the audit mirror and its rotated files", () => {
  const mirror = ["/l/a.jsonl", ...[1, 2, 3, 4, 5].map((i) => `/l/a.jsonl.${i}`)];
  const start = childPermissions(["start", "--audit", "/l/a.jsonl", "--data-dir", "/d"], facts());
  assert.deepEqual(allowed(start.flags, "write"), ["/d", ...mirror]);
  const verify = childPermissions(["audit", "verify", "--jsonl", "/l/a.jsonl"], facts());
  assert.deepEqual(allowed(verify.flags, "read"), [STATE, ...mirror]);
  assert.deepEqual(allowed(verify.flags, "write"), [STATE]);
});

Deno.test("childPermissions() grants agent add the policy it checks, resolved where typed", () => {
  const plan = childPermissions(["agent", "add", "bot", "--policy", "p.yaml"], facts());
  assert.deepEqual(allowed(plan.flags, "read"), [STATE, "/home/me/work/p.yaml"]);
  assert.equal(allowed(plan.flags, "run"), undefined);
  assert.equal(allowed(plan.flags, "net"), undefined);
});

Deno.test("childPermissions() grants each policy subcommand its files alone", () => {
  const f = facts();
  const sign = childPermissions(
    ["policy", "sign", "m.wasm", "--key", "/k/key.json", "--name", "x"],
    f,
  );
  assert.deepEqual(sign.flags, [
    "--allow-read=/k/key.json,/home/me/work/m.wasm",
    "--allow-write=/home/me/work/m.wasm.sig.json",
    "--allow-env=LOG_TOKENS,LOG_STREAM",
  ]);
  assert.deepEqual(childPermissions(["policy", "keygen", "--out", "k.json"], f).flags, [
    "--allow-write=/home/me/work/k.json",
    "--allow-env=LOG_TOKENS,LOG_STREAM",
  ]);
  assert.deepEqual(
    allowed(
      childPermissions(["policy", "verify", "m.wasm", "--policy", "p.yaml"], f).flags,
      "read",
    ),
    ["/home/me/work/m.wasm", "/home/me/work/m.wasm.sig.json", "/home/me/work/p.yaml"],
  );
  assert.deepEqual(
    allowed(childPermissions(["policy", "test", "m.wasm", "cases.yaml"], f).flags, "read"),
    ["/home/me/work/m.wasm", "/home/me/work/cases.yaml"],
  );
  const build = childPermissions(["policy", "build"], f).flags;
  assert.deepEqual(allowed(build, "write"), ["/src/omotai/policies-wasm/dist", "/tmp"]);
  assert.deepEqual(allowed(build, "run"), [DENO]);
});

Deno.test("childPermissions() gives help, --version and a bad command line nothing at all", () => {
  for (
    const args of [[], ["help"], ["--version"], ["nope"], ["start", "--bogus"], [
      "agent",
      "add",
      "--nope",
    ]]
  ) {
    const plan = childPermissions(args, facts());
    assert.deepEqual(plan.flags, [], args.join(" "));
    assert.deepEqual(plan.args, args, "passed on untouched: the runtime prints the usage error");
  }
});

Deno.test("childPermissions() never grants a kind of permission without its list", () => {
  const lines = [
    ["start", "--mode", "sse", "--demo-site", "--audit", "a.jsonl"],
    ["start", "--console"],
    ["secret", "add", "x", "--kind", "password"],
    ["vault", "rekey"],
    ["policy", "build", "--sign", "k.json"],
  ];
  for (const args of lines) {
    for (const flag of childPermissions(args, facts()).flags) {
      assert.match(flag, /^--allow-(read|write|net|env|run|sys)=[^,]+(,[^,]+)*$/, flag);
    }
  }
  assert.deepEqual(
    allowed(childPermissions(["vault", "rekey"], facts()).flags, "env"),
    [
      "OMOTAI_DB",
      "LOG_TOKENS",
      "LOG_STREAM",
      "OMOTAI_VAULT_KEY",
      "OMOTAI_VAULT_PASSPHRASE",
      "OMOTAI_VAULT_NEW_KEY",
      "OMOTAI_VAULT_NEW_PASSPHRASE",
    ],
  );
});

Deno.test("childPermissions() refuses a path Deno's flags cannot carry: PATH_NOT_GRANTABLE", () => {
  assert.throws(
    () => childPermissions(["start", "--policy", "/a,b/p.yaml"], facts()),
    (e: unknown) => e instanceof LaunchError && e.code === "PATH_NOT_GRANTABLE",
  );
});

Deno.test("childPermissions() lets start fail before the runtime runs when there is no browser", () => {
  assert.throws(
    () => childPermissions(["start"], facts({ browser: null })),
    (e: unknown) => e instanceof BrowserLaunchError,
  );
  // Other commands never start a browser and do not need one.
  assert.doesNotThrow(() => childPermissions(["agent", "list"], facts({ browser: null })));
});

Deno.test("childPermissions() grants a command naming a shared database its host and port and the PG* variables, nothing more", () => {
  const url = "postgres://omotai_owner:s3cret@db.internal:6543/omotai";
  for (
    const args of [
      ["tenant", "list", "--database", url],
      ["agent", "add", "ada", "--database", url, "--tenant", "acme"],
      ["audit", "verify", "--database", url, "--tenant", "acme"],
      ["domain", "list", "--database", url, "--tenant", "acme"],
      ["grant", "list", "--database", url, "--tenant", "acme"],
      ["grant", "add", "shop.pw", "--agent", "bot", "--database=" + url, "--tenant", "acme"],
      ["secret", "add", "shop.pw", "--kind", "password", "--database", url, "--tenant", "acme"],
      ["secret", "rm", "shop.pw", "--database", url, "--tenant", "acme"],
      ["start", "--mode", "sse", "--database", url, "--tenant", "acme"],
    ]
  ) {
    const plan = childPermissions(args, facts());
    const net = allowed(plan.flags, "net") ?? [];
    // `start` also listens on its own port; every other command reaches the database only.
    assert.deepEqual(
      args[0] === "start" ? net.filter((a) => a.startsWith("db.")) : net,
      ["db.internal:6543"],
      args.join(" "),
    );
    const env = allowed(plan.flags, "env") ?? [];
    for (const name of ["OMOTAI_DATABASE_URL", "PGAPPNAME", "PGTARGET_SESSION_ATTRS"]) {
      assert.ok(env.includes(name), `${args[0]}: ${name}`);
    }
    assert.ok(!plan.flags.some((f) => f.includes("s3cret")), "the password is in no flag");
    // Nor in the runtime's argv (readable in /proc): it goes through its environment.
    assert.ok(!plan.args.some((a) => a.includes("s3cret")), plan.args.join(" "));
    assert.equal(plan.env.OMOTAI_DATABASE_URL, url);
  }
  // From the environment, the default port; and no database named: no network at all.
  const fromEnv = childPermissions(
    ["tenant", "add", "acme"],
    facts({ env: { HOME: "/home/me", OMOTAI_DATABASE_URL: "postgresql://u:p@10.0.0.5/omotai" } }),
  );
  assert.deepEqual(allowed(fromEnv.flags, "net"), ["10.0.0.5:5432"]);
  assert.equal(allowed(childPermissions(["agent", "list"], facts()).flags, "net"), undefined);
  assert.equal(
    allowed(childPermissions(["audit", "verify", "--database", "not a url"], facts()).flags, "net"),
    undefined,
  );
  // The checkpoint files are read, where they are.
  const checked = childPermissions(
    ["audit", "verify", "--checkpoints", "cp.jsonl", "--checkpoint-key", "/keys/k.pub"],
    facts(),
  );
  const read = allowed(checked.flags, "read") ?? [];
  assert.ok(read.includes("/home/me/work/cp.jsonl") && read.includes("/keys/k.pub"), read.join());
  // Every runtime's file and key at once, several words after one flag.
  const several = allowed(
    childPermissions(
      [
        "audit",
        "verify",
        "--checkpoints",
        "a.jsonl",
        "b.jsonl",
        "--checkpoint-key",
        "a.pub",
        "/k/b.pub",
      ],
      facts(),
    ).flags,
    "read",
  ) ?? [];
  for (
    const f of ["/home/me/work/a.jsonl", "/home/me/work/b.jsonl", "/home/me/work/a.pub", "/k/b.pub"]
  ) {
    assert.ok(several.includes(f), `${f} in ${several.join()}`);
  }
});

Deno.test("spreadLists() gives every word after a list flag that flag, up to the next option or --", () => {
  assert.deepEqual(
    spreadLists(["--checkpoints", "a", "b", "--tenant", "t", "--checkpoint-key=k1", "k2"], [
      "checkpoints",
      "checkpoint-key",
    ]),
    [
      "--checkpoints",
      "a",
      "--checkpoints",
      "b",
      "--tenant",
      "t",
      "--checkpoint-key=k1",
      "--checkpoint-key",
      "k2",
    ],
  );
  assert.deepEqual(spreadLists(["--checkpoints", "a", "--", "b"], ["checkpoints"]), [
    "--checkpoints",
    "a",
    "--",
    "b",
  ]);
  assert.deepEqual(spreadLists(["--tenant", "t", "x"], ["checkpoints"]), ["--tenant", "t", "x"]);
  const line = parseCommandLine(["audit", "verify", "--checkpoints", "a", "b"]);
  assert.deepEqual(line.values.checkpoints, ["a", "b"]);
  assert.deepEqual(line.positionals, []);
});

const EVAL_NET = "--allow-net=127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4";
const EVAL_ENV = [
  ...LAUNCHER_ENV,
  "PATH",
  "LOGNAME",
  "SHELL",
  "TERM",
  "USER",
  "OSTYPE",
  "PATHEXT",
  "OMOTAI_EVAL_API_KEY",
  "NODE_V8_COVERAGE",
];

Deno.test("parseCommandLine() reads eval with its defaults and repeated --arm", () => {
  const line = parseCommandLine(["eval", "--arm", "a=x", "--arm=b=y z", "--no-omotai"]);
  assert.deepEqual({ ...line.values }, {
    arm: ["a=x", "b=y z"],
    "no-omotai": true,
    out: "omotai-eval",
    agent: "scripted",
    concurrency: "1",
  });
  assert.throws(() => parseCommandLine(["eval", "stray"]), TypeError);
});

Deno.test("childPermissions eval: loopback, the report dir, the browser, Deno and the source", () => {
  const plan = childPermissions(["eval"], facts());
  const out = "/home/me/work/omotai-eval";
  assert.deepEqual(plan.flags, [
    `--allow-read=${out},/src/omotai/runtime,/usr/bin/chromium,/src/omotai/deno.json`,
    `--allow-write=${out}`,
    EVAL_NET,
    `--allow-env=${EVAL_ENV.join(",")}`,
    `--allow-run=/usr/bin/chromium,${DENO}`,
    "--allow-sys=uid",
  ]);
  assert.deepEqual(plan.args, ["eval"]);
  assert.deepEqual(plan.env, { OMOTAI_BROWSER: "/usr/bin/chromium" });
  // OMOTAI_BROWSER's browser, as for start.
  const named = childPermissions(["eval"], facts({ browser: "/opt/chrome/chrome" }));
  assert.deepEqual(allowed(named.flags, "run"), ["/opt/chrome/chrome", DENO]);
  assert.deepEqual(named.env, { OMOTAI_BROWSER: "/opt/chrome/chrome" });
});

Deno.test("childPermissions eval --arm runs each arm's program: a bare name as is, a path from cwd", () => {
  const plan = childPermissions([
    "eval",
    "--arm",
    "playwright=npx @playwright/mcp@0.0.83 --headless --isolated",
    "--arm=mine=  ./bin/server --stdio",
    "--arm",
    "abs=/opt/mcp/server",
    "--arm",
    "no-command=",
    "--arm",
    "no-equals",
  ], facts());
  assert.deepEqual(allowed(plan.flags, "run"), [
    "/usr/bin/chromium",
    DENO,
    "npx",
    "/home/me/work/bin/server",
    "/opt/mcp/server",
  ]);
  // Without the Omotai arm: no Deno to run, no deno.json to read.
  const alone = childPermissions(["eval", "--no-omotai", "--arm", "p=npx x"], facts());
  assert.deepEqual(allowed(alone.flags, "run"), ["/usr/bin/chromium", "npx"]);
  assert.deepEqual(allowed(alone.flags, "read"), [
    "/home/me/work/omotai-eval",
    "/src/omotai/runtime",
    "/usr/bin/chromium",
  ]);
  // A program Deno's flag cannot carry.
  assert.throws(
    () => childPermissions(["eval", "--arm", "x=./a,b/server"], facts()),
    (e: unknown) => e instanceof LaunchError && e.code === "PATH_NOT_GRANTABLE",
  );
});

Deno.test("childPermissions eval --agent openai:URL adds that URL's host and port alone", () => {
  const net = (agent: string) =>
    allowed(childPermissions(["eval", "--agent", agent, "--model", "m"], facts()).flags, "net");
  const loopback = ["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"];
  assert.deepEqual(net("openai:http://127.0.0.1:11434/v1"), [...loopback, "127.0.0.1:11434"]);
  assert.deepEqual(net("openai:https://api.example.com/v1"), [...loopback, "api.example.com:443"]);
  assert.deepEqual(net("openai:http://[::1]:8000/v1"), [...loopback, "[::1]:8000"]);
  assert.deepEqual(net("openai:http://llm.lan/v1"), [...loopback, "llm.lan:80"]);
  // Not a URL, not http(s), or the scripted agent: loopback only (the runtime says what is wrong).
  for (const agent of ["openai:nope", "openai:ftp://x/", "scripted"]) {
    assert.deepEqual(net(agent), loopback, agent);
  }
});

Deno.test("childPermissions eval --out and --policy are read where typed", () => {
  const plan = childPermissions(
    ["eval", "--out", "reports/run1", "--policy", "../p.yaml"],
    facts({ cwd: "/home/me/work/sub" }),
  );
  assert.deepEqual(allowed(plan.flags, "read"), [
    "/home/me/work/p.yaml",
    "/home/me/work/sub/reports/run1",
    "/src/omotai/runtime",
    "/usr/bin/chromium",
    "/src/omotai/deno.json",
  ]);
  assert.deepEqual(allowed(plan.flags, "write"), ["/home/me/work/sub/reports/run1"]);
  const abs = childPermissions(["eval", "--out=/tmp/x"], facts());
  assert.deepEqual(allowed(abs.flags, "write"), ["/tmp/x"]);
});

Deno.test("childPermissions eval never grants a broad flag, and a bad line gets nothing", () => {
  const lines = [
    ["eval"],
    ["eval", "--no-omotai", "--arm", "p=npx @playwright/mcp@0.0.83 --headless"],
    ["eval", "--agent", "openai:http://127.0.0.1:11434/v1", "--only", "a,b", "--policy", "p.yaml"],
  ];
  for (const args of lines) {
    for (const flag of childPermissions(args, facts()).flags) {
      assert.match(flag, /^--allow-(read|write|net|env|run|sys)=[^,]+(,[^,]+)*$/, flag);
    }
  }
  for (const args of [["eval", "stray"], ["eval", "--bogus"], ["eval", "--arm"]]) {
    assert.deepEqual(childPermissions(args, facts()).flags, [], args.join(" "));
  }
  // The eval always starts a browser (control runs, the report check).
  assert.throws(
    () => childPermissions(["eval"], facts({ browser: null })),
    (e: unknown) => e instanceof BrowserLaunchError,
  );
});
