/**
 * A `RequestView` read back from a store as `unknown` (a shared database's JSON, which any
 * runtime of the tenant could have written): parsed before a console shows it, so a row of the
 * wrong shape is dropped, never a page that fails for every operator.
 *
 * @module
 */
import { z } from "zod";
import type { RequestView } from "./request_view.ts";

const Flag = z.enum(["bidi", "invisible", "control"]);
const Text = z.object({ text: z.string(), length: z.number(), flags: z.array(Flag) });
const Entry = z.object({
  name: Text,
  value: Text,
  file: z.object({
    filename: Text,
    content_type: z.string(),
    size: z.number(),
    sha256: z.string(),
  }).optional(),
});

/** The schema of a `RequestView`. */
export const RequestViewSchema: z.ZodType<RequestView> = z.object({
  method: z.string(),
  url: Text,
  query: z.array(Entry),
  headers: z.array(Entry),
  content_type: z.string().nullable(),
  encoding: z.enum(["none", "urlencoded", "multipart", "text", "opaque"]),
  entries: z.array(Entry),
  size: z.number(),
  sha256: z.string(),
  flags: z.array(Flag),
}) as z.ZodType<RequestView>;

/** `value` as a `RequestView`, or undefined when it is not one. */
export function parseRequestView(value: unknown): RequestView | undefined {
  const parsed = RequestViewSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
