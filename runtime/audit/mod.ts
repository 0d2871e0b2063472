/**
 * The door of runtime/audit/ (the audit's policy above its store: signed checkpoints and their
 * signer, the JSONL mirror and its verification): other folders import from this file only.
 * The rows, their chain and every writer and `AuditStore` adapter are runtime/store/'s.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export { checkpointCheck } from "./checkpoint.ts";
export { importCheckpointPublicKey } from "./checkpoint.ts";
export {
  CHECKPOINT_FILE,
  CHECKPOINT_PUB_FILE,
  Checkpointer,
  checkpointKeyIn,
  readCheckpoints,
} from "./checkpointer.ts";
export { JsonlMirror } from "./jsonl_mirror.ts";
export { parseAge, verifyJsonl } from "./verify.ts";
