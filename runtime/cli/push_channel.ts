/**
 * Push challenges on the operator's console: the vendor and match number a login page shows
 * become a question on the console (Questions page and `/api/questions`); the operator
 * approves the push on their device and answers `approved` (or anything else to refuse). The
 * answer goes to the runtime only; the model sees the login's status.
 *
 * @module
 */
import type { PushChannel } from "../login/mod.ts";
import type { HumanChannel } from "../tools/mod.ts";

/** How long the operator has to answer a push (a push itself expires in about a minute). */
export const PUSH_TIMEOUT_MS = 120_000;

/** A PushChannel over the console's questions, for one session. */
export function consolePushChannel(
  human: HumanChannel,
  session: { id: string; agent: string | null },
  timeoutMs = PUSH_TIMEOUT_MS,
): PushChannel {
  return {
    async ask({ vendor, number, origin }) {
      const question = `Login push for ${origin}: ${vendor} shows the number ${number}. ` +
        `Approve it on your device, then answer "approved" (any other answer refuses it).`;
      const outcome = await human.ask(
        { question, agent: session.agent, session: session.id },
        timeoutMs,
      );
      if ("timeout" in outcome) return "timeout";
      return /^\s*approved?\s*$/i.test(outcome.answer) ? "approved" : "denied";
    },
  };
}
