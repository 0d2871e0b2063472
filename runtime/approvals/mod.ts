/**
 * The board of human decisions: approvals, operator questions and login push challenges,
 * what the console lists and a human answers (the records' types are the store's port,
 * runtime/store/decision_store.ts).
 *
 * @module
 */
export * from "./approval_board.ts";
export * from "./decision_board.ts";
export * from "./question_board.ts";
export {
  type Approval,
  type ApprovalState,
  type HumanQuestion,
  QUESTION_MAX_CHARS,
  type QuestionState,
  type SettleResult,
} from "../store/mod.ts";
