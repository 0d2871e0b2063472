import assert from "node:assert/strict";
import {
  BLIND_SILENCE_MS,
  BLOCKED_SILENCE_MS,
  cpuSpent,
  type RendererCpu,
  type Silence,
  silenceVerdict,
  SPIN_CPU_S,
  STUCK_SILENCE_MS,
} from "./renderer_cpu.ts";

const cpu = (entries: [number, number][]): RendererCpu => new Map(entries);

Deno.test("cpuSpent() is the most any one renderer spent; new ones count from zero, gone ones not", () => {
  const before = cpu([[10, 1.0], [11, 5.0], [12, 9.0]]);
  assert.equal(cpuSpent(before, cpu([[10, 1.5], [11, 7.0], [12, 9.1]])), 2.0);
  assert.equal(cpuSpent(before, cpu([[10, 1.0], [13, 3.5]])), 3.5, "started in between");
  assert.equal(cpuSpent(before, cpu([])), 0, "all exited");
  assert.equal(cpuSpent(before, before), 0);
});

Deno.test("silenceVerdict() calls spinning only a renderer that spent the CPU while silent", () => {
  const at = cpu([[7, 2.0], [8, 0.5]]);
  const vectors: [string, Silence, ReturnType<typeof silenceVerdict>][] = [
    [
      "one probe is never enough, however much ran",
      { silentMs: 4_000, probes: 1, before: at, after: cpu([[7, 20], [8, 0.5]]) },
      "wait",
    ],
    [
      "idle machine, a loop: two probes, a core's worth of CPU",
      { silentMs: 8_000, probes: 2, before: at, after: cpu([[7, 10.0], [8, 0.5]]) },
      "spinning",
    ],
    [
      "loaded machine, a loop: a fifth of a core for 12 s is not yet enough",
      { silentMs: 12_000, probes: 3, before: at, after: cpu([[7, 4.4], [8, 0.6]]) },
      "wait",
    ],
    [
      "loaded machine, a loop: a fifth of a core for 28 s is",
      { silentMs: 28_000, probes: 7, before: at, after: cpu([[7, 2.0 + SPIN_CPU_S + 0.6]]) },
      "spinning",
    ],
    [
      "starved healthy page: silent 20 s, ran a little",
      { silentMs: 20_000, probes: 5, before: at, after: cpu([[7, 2.6], [8, 0.9]]) },
      "wait",
    ],
    [
      "starved healthy page: silent past the stuck bound, but it ran",
      { silentMs: STUCK_SILENCE_MS + 1, probes: 11, before: at, after: cpu([[7, 3.0], [8, 0.5]]) },
      "wait",
    ],
    [
      "stuck: silent past the bound and nothing ran",
      { silentMs: STUCK_SILENCE_MS, probes: 11, before: at, after: cpu([[7, 2.05], [8, 0.5]]) },
      "stuck",
    ],
    [
      "nothing ran but not yet long: a stopped (starved) renderer is waited for",
      { silentMs: 20_000, probes: 5, before: at, after: at },
      "wait",
    ],
    [
      "blocked: nothing ran and no main thread waited for the CPU (a synchronous XHR)",
      { silentMs: BLOCKED_SILENCE_MS, probes: 2, before: at, after: at, waited: 0.05 },
      "stuck",
    ],
    [
      "blocked on a loaded machine: an idle thread woken now and then waited a little",
      { silentMs: 10_000, probes: 3, before: at, after: at, waited: 1.5 },
      "stuck",
    ],
    [
      "starved for a quarter of the silence is starved",
      { silentMs: 10_000, probes: 3, before: at, after: at, waited: 2.5 },
      "wait",
    ],
    [
      "blocked, but not yet long",
      { silentMs: BLOCKED_SILENCE_MS - 1, probes: 2, before: at, after: at, waited: 0 },
      "wait",
    ],
    [
      "starved: nothing ran, but a main thread waited on the run queue",
      { silentMs: 20_000, probes: 5, before: at, after: at, waited: 12 },
      "wait",
    ],
    [
      "not blocked: a renderer ran a little (a starved page's work)",
      { silentMs: 20_000, probes: 5, before: at, after: cpu([[7, 2.6]]), waited: 0 },
      "wait",
    ],
    [
      "run queue unread: the stuck bound only",
      { silentMs: 20_000, probes: 5, before: at, after: at, waited: undefined },
      "wait",
    ],
    [
      "no readings: only the blind bound counts",
      { silentMs: 30_000, probes: 7, before: undefined, after: at },
      "wait",
    ],
    [
      "no readings past the blind bound",
      { silentMs: BLIND_SILENCE_MS, probes: 15, before: at, after: undefined },
      "stuck",
    ],
  ];
  for (const [name, silence, want] of vectors) assert.equal(silenceVerdict(silence), want, name);
});

Deno.test("silenceVerdict() judges spinning by the bound it is given, SPIN_CPU_S by default", () => {
  const at = cpu([[7, 2.0]]);
  const spent = (s: number): Silence => ({
    silentMs: 4_000,
    probes: 2,
    before: at,
    after: cpu([[7, 2.0 + s]]),
  });
  assert.equal(silenceVerdict(spent(SPIN_CPU_S - 0.1)), "wait");
  assert.equal(silenceVerdict(spent(SPIN_CPU_S)), "spinning");
  assert.equal(silenceVerdict(spent(1.5), 1.5), "spinning");
  assert.equal(silenceVerdict(spent(1.4), 1.5), "wait");
  // A narrowed bound changes only the CPU asked for: one probe is still never enough.
  assert.equal(silenceVerdict({ ...spent(20), probes: 1 }, 1.5), "wait");
});
