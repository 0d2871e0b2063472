/**
 * One running browser of a session: the process, its target tracker and the generation
 * number that tells its events from those of a browser that came before.
 *
 * @module
 */
import type { BrowserProcess, TargetTracker } from "../../cdp/mod.ts";
import type { LaunchGroup } from "./launch_group.ts";

/** A launched browser. */
export interface Live {
  browser: BrowserProcess;
  tracker: TargetTracker;
  generation: number;
  /** The browser's profile directory (removed when the process exits). */
  profileDir: string;
  /** Started ahead of its session (taken from the warm pool). */
  warm: boolean;
  /** Its cgroup, when browsers get one (`endOf` reads its OOM kills). */
  group?: LaunchGroup;
}
