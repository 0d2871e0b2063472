/**
 * Pending approvals and operator questions: what the console lists and a human answers.
 *
 * @module
 */
export * from "./approval_queue.ts";
export * from "./questions.ts";
export * from "./shared_approvals.ts";
export * from "./shared_questions.ts";
