/**
 * The byte-rate caps of every browser of this runtime (its CDP events, its held request
 * bodies): the measured defaults (`CDP_BYTE_RATE`, `HELD_BODY_RATE`), with what the runtime's
 * own policy sets in `limits` instead.
 *
 * @module
 */
import { type ByteRateLimits, CDP_BYTE_RATE } from "../../cdp/mod.ts";
import type { PolicyFile } from "../policy/mod.ts";
import { HELD_BODY_RATE } from "../proxy/mod.ts";

/** The caps `policy.limits` asks for, each unset key at its default. */
export function byteRates(
  policy: Pick<PolicyFile, "limits">,
): { cdp: ByteRateLimits; heldBodies: ByteRateLimits } {
  const l = policy.limits ?? {};
  const floodMs = (fallback: number) =>
    l.flood_seconds === undefined ? fallback : l.flood_seconds * 1000;
  return {
    cdp: {
      bytesPerSec: l.cdp_bytes_per_sec ?? CDP_BYTE_RATE.bytesPerSec,
      burstBytes: l.cdp_burst_bytes ?? CDP_BYTE_RATE.burstBytes,
      floodMs: floodMs(CDP_BYTE_RATE.floodMs),
    },
    heldBodies: {
      bytesPerSec: l.held_body_bytes_per_sec ?? HELD_BODY_RATE.bytesPerSec,
      burstBytes: l.held_body_burst_bytes ?? HELD_BODY_RATE.burstBytes,
      floodMs: floodMs(HELD_BODY_RATE.floodMs),
    },
  };
}
