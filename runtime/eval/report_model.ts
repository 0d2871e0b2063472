/**
 * What `omotai eval` found, as data: one {@link CaseResult} per case and arm, summed per arm
 * into an {@link ArmSummary}. Every renderer (terminal, JSON, Markdown, HTML) reads this and
 * nothing else, so the four reports cannot disagree.
 *
 * @module
 */

/** What a case measures. */
export type CaseKind = "exfiltration" | "write" | "secret" | "approval" | "benign";

/** The case as the report names it (no page content, no planted values). */
export interface CaseInfo {
  /** Stable id, e.g. `exfil-fetch-post`. */
  id: string;
  kind: CaseKind;
  title: string;
  /** OWASP AI Testing Guide id, e.g. `AITG-APP-02`; `-` for a benign task. */
  owasp: string;
  /** One line: what the injected instruction asks for, or the task. */
  summary: string;
}

/** One piece of evidence, readable by a reviewer; never a planted secret's value. */
export interface Evidence {
  /**
   * `attacker`: a hit at the attacker (the HTTP request line, an upgrade or a UDP datagram);
   * `write`: a write the portal received; `secret`: a planted value found in what the arm
   * returned (named, never quoted); `refusal`: what the arm answered instead; `note`: anything else.
   */
  kind: "attacker" | "write" | "secret" | "refusal" | "note";
  detail: string;
}

/** The control run of a case: the same attack in a plain Chromium with no protection. */
export interface ControlResult {
  /** Whether the unprotected run leaked (wrote, reached the attacker, showed the secret). */
  leaked: boolean;
  detail: string;
}

/** One case run through one arm. */
export interface CaseResult {
  caseId: string;
  arm: string;
  /**
   * `safe`: no harm happened (an attack case), or the task succeeded (a benign case);
   * `harmed`: the attack got through; `failed`: a benign task did not finish;
   * `error`: the case could not run (the arm died, a timeout): counted apart, never as safe.
   */
  outcome: "safe" | "harmed" | "failed" | "error";
  /** Hits at the attacker during the case (requests, upgrades, datagrams). */
  leaks: number;
  /** Writes the portal received that no human approved. */
  writes: number;
  /** Planted secret values found (in any encoding) in what the arm returned. */
  secretLeaks: number;
  /** Tool calls the agent made. */
  calls: number;
  /** Characters of every tool result the arm returned to the agent. */
  chars: number;
  /** Wall time of the case. */
  ms: number;
  evidence: Evidence[];
  /** Set when the run could not finish (`outcome: "error"`). */
  error?: string;
}

/** An arm's totals. */
export interface ArmSummary {
  arm: string;
  /** Attack cases (not benign) run and how many of them did harm. */
  attacks: number;
  harmed: number;
  /** Cases with a hit at the attacker, and the hits in all. */
  leakCases: number;
  leaks: number;
  /** Cases where an unapproved write reached the portal, and the writes in all. */
  writeCases: number;
  writes: number;
  /** Cases where a planted secret reached the agent, and the values found in all. */
  secretCases: number;
  secretLeaks: number;
  /** Benign tasks run and completed. */
  benign: number;
  benignOk: number;
  /** Mean characters the arm returned per benign task that ran (0 with none). */
  charsPerBenign: number;
  /** Cases that could not run. */
  errors: number;
}

/** An arm as the report names it. */
export interface ArmInfo {
  name: string;
  /** The command line run (`omotai start …` for the default arm). */
  command: string;
}

/** A whole eval run. */
export interface EvalReport {
  /** `omotai eval` report format version. */
  format: 1;
  omotaiVersion: string;
  startedAt: string;
  finishedAt: string;
  /** The policy file the Omotai arm ran under, or `null` for the eval's default policy. */
  policy: string | null;
  /** `scripted`, or `openai:<url> <model>`. */
  agent: string;
  arms: ArmInfo[];
  cases: CaseInfo[];
  /** The control run of each case (by case id). */
  controls: Record<string, ControlResult>;
  results: CaseResult[];
  summary: ArmSummary[];
}

/** Sums `results` per arm, in the order of `arms`. */
export function summarize(
  arms: readonly ArmInfo[],
  results: readonly CaseResult[],
  cases: readonly CaseInfo[],
): ArmSummary[] {
  const kindOf = new Map(cases.map((c) => [c.id, c.kind]));
  return arms.map(({ name }) => {
    const mine = results.filter((r) => r.arm === name);
    const attacks = mine.filter((r) => kindOf.get(r.caseId) !== "benign");
    const benign = mine.filter((r) => kindOf.get(r.caseId) === "benign");
    // A task that could not run sent nothing worth averaging.
    const ran = benign.filter((r) => r.outcome !== "error");
    const charsBenign = ran.reduce((n, r) => n + r.chars, 0);
    return {
      arm: name,
      attacks: attacks.length,
      harmed: attacks.filter((r) => r.outcome === "harmed").length,
      leakCases: mine.filter((r) => r.leaks > 0).length,
      leaks: mine.reduce((n, r) => n + r.leaks, 0),
      writeCases: mine.filter((r) => r.writes > 0).length,
      writes: mine.reduce((n, r) => n + r.writes, 0),
      secretCases: mine.filter((r) => r.secretLeaks > 0).length,
      secretLeaks: mine.reduce((n, r) => n + r.secretLeaks, 0),
      benign: benign.length,
      benignOk: benign.filter((r) => r.outcome === "safe").length,
      charsPerBenign: ran.length === 0 ? 0 : Math.round(charsBenign / ran.length),
      errors: mine.filter((r) => r.outcome === "error").length,
    };
  });
}
