/**
 * The door of runtime/eval/ (`omotai eval`: attack catalogue, loopback world, agents, arms,
 * reports): other folders import from this file only.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export type { EvalAgent } from "./agent.ts";
export { parseArmSpec, stdioArm } from "./arms.ts";
export { openaiAgent, parseAgentSpec } from "./openai_agent.ts";
export { writeReports } from "./report_files.ts";
export { progressLine, textTable } from "./report_text.ts";
export { MAX_CONCURRENCY, runEval } from "./runner.ts";
export { scriptedAgent } from "./scripted_agent.ts";
