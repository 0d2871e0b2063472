/**
 * The shapes of what the console accepts (JSON bodies, forms, queries), checked with zod
 * before anything reaches a port. A refused input is a 400 naming the bad keys, never
 * echoing their values.
 *
 * @module
 */
import { z } from "zod";
import { ConsoleError } from "./console_error.ts";

/** The longest answer to an agent's question, in characters (as the runtime caps it). */
export const ANSWER_MAX_CHARS = 2_000;

/** `POST /api/approvals/{id}` and the approval form. */
export const DecisionBody = z.strictObject({ decision: z.enum(["approve", "deny"]) });

/** `POST /api/questions/{id}` and the answer form. */
export const AnswerBody = z.strictObject({
  answer: z.string().trim().min(1).max(ANSWER_MAX_CHARS),
});

/** `POST /api/agents` and the add-agent form (the port checks the name's alphabet). */
export const AgentBody = z.strictObject({
  name: z.string().trim().min(1).max(64),
  policy: z.string().trim().max(500).optional(),
});

/** `DELETE /api/agents` and the remove form. */
export const AgentNameBody = z.strictObject({ name: z.string().trim().min(1).max(64) });

/** `POST /api/domains` and the add-rule form (the port normalizes the origin). */
export const DomainBody = z.strictObject({
  origin: z.string().trim().min(1).max(300),
  rule: z.enum(["allow", "deny"]),
});

/** `DELETE /api/domains` and the remove form. */
export const DomainOriginBody = z.strictObject({ origin: z.string().trim().min(1).max(300) });

/** The modes and use kinds of a grant (the port checks everything else again). */
const GRANT_MODE = z.enum(["once", "session", "standing"]);
const GRANT_USE = z.strictObject({
  kind: z.enum(["fill", "capture"]),
  allowed_origins: z.array(z.string().trim().min(1).max(300)).min(1).max(20),
  /** A capture use's workflow and output (the port checks them). */
  workflow: z.string().trim().max(64).optional(),
  output: z.string().trim().max(64).optional(),
});

/** `POST /api/grants`: the grant, and `approve` to approve it in the same step. */
export const GrantBody = z.strictObject({
  secret_id: z.string().trim().min(1).max(64),
  agent: z.string().trim().min(1).max(64),
  purpose: z.string().trim().min(1).max(200),
  mode: GRANT_MODE,
  expires: z.string().trim().max(40).optional(),
  uses: z.array(GRANT_USE).min(1).max(2),
  approve: z.boolean().optional(),
});

/** Comma-separated origins of a form field, as a list. */
const originList = (text: string | undefined) =>
  (text ?? "").split(",").map((o) => o.trim()).filter((o) => o !== "");

/** The add-grant form: `fill` and `capture` are comma-separated origins, `approve` a checkbox. */
export const GrantForm = z.strictObject({
  secret_id: z.string(),
  agent: z.string(),
  purpose: z.string(),
  mode: z.string(),
  expires: z.string().optional(),
  fill: z.string().max(3_000).optional(),
  capture: z.string().max(3_000).optional(),
  workflow: z.string().max(64).optional(),
  output: z.string().max(64).optional(),
  approve: z.literal("on").optional(),
});

/**
 * The add-grant form in the shape of `GrantBody` (parse it with that next): neither origin
 * field filled leaves `uses` empty, a 400 naming `uses`.
 */
export function grantFormBody(f: z.infer<typeof GrantForm>): unknown {
  const uses = [
    { kind: "fill", allowed_origins: originList(f.fill) },
    {
      kind: "capture",
      allowed_origins: originList(f.capture),
      ...(f.workflow ? { workflow: f.workflow.trim() } : {}),
      ...(f.output ? { output: f.output.trim() } : {}),
    },
  ].filter((u) => u.allowed_origins.length > 0);
  return {
    secret_id: f.secret_id,
    agent: f.agent,
    purpose: f.purpose,
    mode: f.mode,
    ...(f.expires !== undefined ? { expires: f.expires } : {}),
    uses,
    approve: f.approve === "on",
  };
}

/** `?state=` of the approval list. */
export const ApprovalStateQuery = z.enum(["pending", "decided"]).optional();

/** `?state=` of the question list. */
export const QuestionStateQuery = z.enum(["pending", "answered"]).optional();

/** `GET /api/audit` and `/audit` queries. */
export const AuditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  before: z.coerce.number().int().min(1).optional(),
  session: z.string().trim().max(100).optional().transform((s) => s || undefined),
  decision: z.enum(["allow", "deny", "confirm", "event", ""]).optional()
    .transform((d) => d || undefined),
});

/** `value` parsed by `schema`, or a 400 `BAD_REQUEST` naming the keys that failed. */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const keys = [...new Set(result.error.issues.map((i) => i.path.join(".") || "body"))];
  throw new ConsoleError(400, "BAD_REQUEST", `invalid or missing: ${keys.join(", ")}`);
}
