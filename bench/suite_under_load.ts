/**
 * The suite on a busy machine (issue 39, item 7): runs the README's test command `--runs`
 * times in a row with `--hogs` CPU hogs spinning beside it the whole time, and prints for
 * each run its wall time, its passed / failed counts and its slowest files (the sum of each
 * file's own test durations, as `deno test` prints them). Exits 1 when a run fails or is
 * over `--limit-min`, so "three runs in a row with two hogs, each under 15 minutes" is one
 * command whose answer is its exit status:
 *
 *     deno run -A bench/suite_under_load.ts --runs 3 --hogs 2 --limit-min 15
 *
 * Each run's whole output is kept in `--out` (default `runs/suite_under_load/`) as
 * `run-N.log`, with a `summary.json` beside it. Heavy (the whole suite, N times): run it
 * alone.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { cpuHogs } from "../tests/helpers/cpu_hogs.ts";

/** One run of the suite: what the summary line and the per-test lines said. */
export interface SuiteRun {
  readonly run: number;
  readonly wallS: number;
  readonly exitCode: number;
  readonly passed: number;
  readonly failed: number;
  readonly slowestFiles: readonly { file: string; seconds: number }[];
  /**
   * CPU-seconds the run used, every descendant counted (Chromium too), from a cgroup v1
   * `cpuacct` group of its own; undefined where the host has none (a v2-only host moves
   * browsers into the runtime's own groups, out of any group the bench could count).
   */
  readonly cpuS?: number;
}

/** The v1 `cpuacct` hierarchy, where this host has it. */
const CPUACCT = "/sys/fs/cgroup/cpuacct";

/**
 * A fresh `cpuacct` group for one run, or undefined when the host has no v1 hierarchy or
 * this process may not make one; `usageS()` reads what its processes used so far.
 */
async function cpuacctGroup(
  name: string,
): Promise<{ dir: string; usageS(): Promise<number>; remove(): Promise<void> } | undefined> {
  const dir = `${CPUACCT}/${name}`;
  try {
    await Deno.mkdir(dir);
  } catch {
    return undefined;
  }
  return {
    dir,
    usageS: async () => Number(await Deno.readTextFile(`${dir}/cpuacct.usage`)) / 1e9,
    // A group is removable once its processes have all exited (the run has ended).
    remove: () => Deno.remove(dir).catch(() => {}),
  };
}

/** Strips the ANSI colours `deno test` writes even into a pipe. */
function plain(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, "");
}

/** Seconds of a `deno test` duration such as `1m3s`, `850ms` or `12µs`. */
function seconds(duration: string): number {
  let total = 0;
  for (const [, value, unit] of duration.matchAll(/(\d+)(ms|µs|m|s)/g)) {
    const n = Number(value);
    total += unit === "m" ? n * 60 : unit === "s" ? n : unit === "ms" ? n / 1000 : 0;
  }
  return total;
}

/**
 * Reads `deno test` output: the counts of the final summary line, and per file the sum of
 * its top-level tests' durations (steps are inside their test's time, so they are skipped).
 */
export function readSuiteOutput(
  output: string,
): Pick<SuiteRun, "passed" | "failed" | "slowestFiles"> {
  const text = plain(output);
  const perFile = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = line.match(/^(\.\/\S+) => (.*) \.\.\. (?:ok|FAILED|ignored) \(([^)]*)\)\s*$/);
    if (!m || m[2].includes(" ... ")) continue;
    perFile.set(m[1], (perFile.get(m[1]) ?? 0) + seconds(m[3]));
  }
  const summary = [...text.matchAll(/(?:ok|FAILED) \| (\d+) passed[^|\n]*(?:\| (\d+) failed)?/g)]
    .at(-1);
  const slowestFiles = [...perFile].sort((a, b) => b[1] - a[1]).slice(0, 12)
    .map(([file, s]) => ({ file, seconds: Math.round(s) }));
  return {
    passed: summary ? Number(summary[1]) : 0,
    failed: summary ? Number(summary[2] ?? 0) : 0,
    slowestFiles,
  };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      runs: { type: "string", default: "3" },
      hogs: { type: "string", default: "2" },
      "limit-min": { type: "string", default: "15" },
      out: { type: "string", default: "runs/suite_under_load" },
      // same: the hogs share the suite's session (and so its autogroup's CPU share); own: each
      // hog in a session of its own, as another user's or a service's load would be.
      "hog-session": { type: "string", default: "same" },
    },
  });
  const runs = Number(values.runs);
  const limitS = Number(values["limit-min"]) * 60;
  await Deno.mkdir(values.out, { recursive: true });
  const hogSession = values["hog-session"];
  if (hogSession !== "same" && hogSession !== "own") {
    console.error(`--hog-session is same or own, not ${hogSession}`);
    return 2;
  }
  // The hogs spin for every run, however long the runs take (the helper's default bound is
  // 15 minutes: a late run would have finished without them).
  await using _hogs = cpuHogs(Number(values.hogs), {
    boundS: runs * 3 * limitS + 600,
    ownSession: hogSession === "own",
  });
  const results: SuiteRun[] = [];
  for (let run = 1; run <= runs; run++) {
    const group = await cpuacctGroup(`suite_under_load_${Deno.pid}_${run}`);
    // The run joins its group before it execs the suite, so every process it starts is counted.
    const command = group
      ? ["sh", "-c", `echo $$ > ${group.dir}/cgroup.procs && exec "$0" task test`, Deno.execPath()]
      : [Deno.execPath(), "task", "test"];
    const started = performance.now();
    const { code, stdout, stderr } = await new Deno.Command(command[0], {
      args: command.slice(1),
      stdout: "piped",
      stderr: "piped",
      stdin: "null",
    }).output();
    const wallS = Math.round((performance.now() - started) / 1000);
    const cpuS = group ? Math.round(await group.usageS()) : undefined;
    await group?.remove();
    const output = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
    await Deno.writeTextFile(`${values.out}/run-${run}.log`, output);
    const result = { run, wallS, exitCode: code, cpuS, ...readSuiteOutput(output) };
    results.push(result);
    console.log(
      `run ${run}: ${Math.floor(wallS / 60)}m${wallS % 60}s` +
        `${cpuS === undefined ? "" : ` (${cpuS} CPU-s)`}, exit ${code}, ` +
        `${result.passed} passed, ${result.failed} failed; slowest: ` +
        result.slowestFiles.slice(0, 5).map((f) => `${f.file} ${f.seconds}s`).join(", "),
    );
  }
  await Deno.writeTextFile(`${values.out}/summary.json`, JSON.stringify(results, null, 2));
  const bad = results.filter((r) => r.exitCode !== 0 || r.failed > 0 || r.wallS > limitS);
  console.log(
    bad.length === 0
      ? `all ${runs} runs passed, each under ${values["limit-min"]} min`
      : `${bad.length} of ${runs} runs failed or were over ${values["limit-min"]} min`,
  );
  return bad.length === 0 ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main());
