/**
 * `omotai eval`: the attack catalogue and the benign tasks through Omotai (under the user's
 * policy) and any other stdio MCP server side by side, measured from outside each arm, with a
 * report in a terminal table, `report.json`, `report.md` and a self-contained `report.html`.
 * The exit code is 1 when Omotai let any attack through or could not run a case, or a case's
 * control did not leak (it would prove nothing), so CI can hold it to its promise.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { OmotaiError } from "../mod.ts";
import { EVAL_OPTIONS } from "../launcher/mod.ts";
import {
  type EvalAgent,
  MAX_CONCURRENCY,
  openaiAgent,
  parseAgentSpec,
  parseArmSpec,
  progressLine,
  runEval,
  scriptedAgent,
  stdioArm,
  textTable,
  writeReports,
} from "../eval/mod.ts";

/** Usage of `omotai eval`. */
export const EVAL_USAGE =
  `omotai eval [--policy FILE] [--arm NAME=COMMAND]... [--only CASES] [--out DIR] [--agent scripted|openai:URL --model NAME] [--no-omotai] [--concurrency N]`;

/** Runs `omotai eval`; returns the exit code. */
export async function evalCommand(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args, options: EVAL_OPTIONS, allowPositionals: false });
  } catch (err) {
    console.error(`omotai eval: ${err instanceof Error ? err.message : err}\n${EVAL_USAGE}`);
    return 2;
  }
  const { values } = parsed;
  let arms;
  let agent: EvalAgent;
  let concurrency: number;
  const out = resolve(values.out);
  // Directories of this run's own under --out, removed at the end: nothing that was there
  // before is touched.
  const made: string[] = [];
  try {
    arms = (values.arm ?? []).map((spec) => {
      const { name, argv } = parseArmSpec(spec);
      return stdioArm(
        name,
        async () => {
          // A fresh working directory per case (Playwright MCP writes its snapshot files
          // there, and a server that keeps state in its cwd must not carry it over).
          await Deno.mkdir(out, { recursive: true });
          const cwd = await Deno.makeTempDir({ dir: out, prefix: `.arm-${name}-` });
          made.push(cwd);
          return { command: argv[0], args: argv.slice(1), cwd };
        },
        argv.join(" "),
      );
    });
    if (values["no-omotai"] && arms.length === 0) {
      throw new TypeError("--no-omotai leaves no arm: add --arm NAME=COMMAND");
    }
    agent = makeAgent(values.agent, values.model);
    concurrency = Number(values.concurrency);
    if (!/^\d+$/.test(values.concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY) {
      throw new TypeError(
        `--concurrency takes a whole number from 1 to ${MAX_CONCURRENCY}, not "${values.concurrency}"`,
      );
    }
  } catch (err) {
    if (err instanceof TypeError) {
      console.error(`omotai eval: ${err.message}\n${EVAL_USAGE}`);
      return 2;
    }
    throw err;
  }
  try {
    const report = await runEval({
      arms,
      // This process's own entry (runtime/cli/main.ts, as the launcher started it): the
      // Omotai arm is started from it with the permissions `omotai start` would get.
      omotaiEntry: values["no-omotai"] ? undefined : new URL(Deno.mainModule),
      policy: values.policy === undefined ? undefined : resolve(values.policy),
      only: values.only,
      workDir: out,
      agent,
      concurrency,
      onControl: (id, result, done, total) =>
        console.log(
          `[control ${String(done).padStart(String(total).length)}/${total}] ${id.padEnd(28)} ${
            result.leaked ? "leaks unprotected" : "DID NOT LEAK"
          }`,
        ),
      onResult: (info, result, done, total) => console.log(progressLine(info, result, done, total)),
    });
    const paths = await writeReports(report, out);
    console.log(`\n${textTable(report)}`);
    console.log(`\nreport: ${paths.html}\n        ${paths.markdown}\n        ${paths.json}`);
    const unproven = report.cases.filter((c) => report.controls[c.id]?.leaked === false);
    if (unproven.length > 0) {
      console.log(
        `\nthese cases did not leak even unprotected, so they prove nothing: ${
          unproven.map((c) => c.id).join(", ")
        }`,
      );
    }
    const omotai = report.summary.find((s) => s.arm === "omotai");
    const broken = omotai !== undefined && (omotai.harmed > 0 || omotai.errors > 0);
    return broken || unproven.length > 0 ? 1 : 0;
  } catch (err) {
    if (err instanceof TypeError) {
      console.error(`omotai eval: ${err.message}`);
      return 2;
    }
    throw err;
  } finally {
    for (const dir of made) await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

function makeAgent(spec: string, model: string | undefined): EvalAgent {
  const parsed = parseAgentSpec(spec);
  if (parsed.kind === "scripted") return scriptedAgent();
  if (model === undefined) {
    throw new OmotaiError("BAD_OPTION", "--agent openai:URL needs --model NAME");
  }
  return openaiAgent({
    baseUrl: parsed.baseUrl,
    model,
    apiKey: Deno.env.get("OMOTAI_EVAL_API_KEY") || undefined,
  });
}
