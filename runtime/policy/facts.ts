/**
 * The facts a policy module judges: one schema for agent actions and network requests
 * (the egress guard reuses it). Facts are read from the browser by the runtime, normalized
 * (origin lowercase without default port, path canonical), never taken from the model.
 *
 * @module
 */
import { z } from "zod";

/** Version of the facts ABI; modules declare the version they were built for. */
export const FACTS_ABI_VERSION = 1;

const origin = z.string().describe("scheme://host[:port], lowercase, default port dropped");
const path = z.string().describe("canonical path: decoded, case folded, dot segments removed");

/** What the facts describe. */
export const FactKindSchema = z.enum([
  "navigate",
  "back",
  "click",
  "type",
  "select",
  "key",
  "tab",
  "snapshot",
  "wait",
  "request",
]);

/** What the facts describe. */
export type FactKind = z.infer<typeof FactKindSchema>;

/** What kind of action a tool proposes: every fact kind but a network request. */
export type ActionKind = Exclude<FactKind, "request">;

/** The facts object. */
export const FactsSchema = z.strictObject({
  abi: z.literal(FACTS_ABI_VERSION),
  kind: FactKindSchema,
  /** Where the action or request goes: the navigation target, link target or request URL. */
  target: z.strictObject({
    scheme: z.string().describe("lowercase scheme without colon, e.g. https, javascript, data"),
    origin: origin.nullable().describe("null for non-http(s) schemes"),
    path: path.nullable(),
  }).nullable(),
  method: z.string().describe("HTTP method in upper case; GET for plain navigation"),
  resource_type: z.string().describe(
    "document, subresource type (image, script, xhr, fetch, ...), or 'action' for agent actions",
  ),
  initiator: z.enum(["agent", "form", "script", "redirect", "page"]),
  frame: z.strictObject({ top: z.boolean(), origin: origin.nullable() }),
  /** Present when the action submits or types into a form. */
  form: z.strictObject({
    method: z.string(),
    action_origin: origin.nullable(),
    action_path: path.nullable(),
    submits: z.boolean().describe("whether this action submits the form"),
    fields: z.array(z.strictObject({ name: z.string(), type: z.string() })),
  }).nullable(),
  /** The element acted on, when there is one. */
  element: z.strictObject({
    tag: z.string(),
    type: z.string().nullable(),
    role: z.string().nullable(),
    link_scheme: z.string().nullable().describe(
      "scheme of the link target, e.g. https, javascript",
    ),
    link_origin: origin.nullable(),
    link_path: path.nullable(),
  }).nullable(),
  session: z.strictObject({
    tainted: z.boolean(),
    actions_used: z.int().min(0),
    seconds_elapsed: z.number().min(0),
    confirmations_used: z.int().min(0),
  }),
});

/** Facts as modules receive them. */
export type Facts = z.infer<typeof FactsSchema>;

/** JSON Schema of the facts (published in docs/policy-facts.schema.json). */
export function factsJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(FactsSchema) as Record<string, unknown>;
}
