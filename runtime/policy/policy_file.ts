/**
 * The YAML policy file: parsed strictly, so an unknown key or a bad type is refused with a
 * message that names the key and its line.
 *
 * @module
 */
import { LineCounter, parseDocument } from "yaml";
import { z } from "zod";
import { PolicyFileError } from "../errors.ts";
import { normalizeOrigin } from "./origin.ts";

const originSchema = z.string().transform((value, ctx) => {
  const origin = normalizeOrigin(value);
  if (!origin || !/^https?:\/\/[^/]+\/?$/i.test(value.trim())) {
    ctx.addIssue({
      code: "custom",
      message: `"${value}" is not an http(s) origin like https://example.com`,
    });
    return z.NEVER;
  }
  return origin;
});

/** Schema of the policy file. The policy issue extends it with rules and limits. */
export const PolicyFileSchema = z.strictObject({
  /** Origins the agent may browse. */
  allowed_origins: z.array(originSchema).default([]),
});

/** A validated policy. */
export type PolicyFile = z.infer<typeof PolicyFileSchema>;

/** Parses and validates policy YAML; `source` names the file in messages. */
export function parsePolicy(text: string, source = "policy"): PolicyFile {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const line = lineCounter.linePos(e.pos[0]).line;
    throw new PolicyFileError(`${source}:${line}: invalid YAML: ${e.message.split("\n")[0]}`);
  }
  const data = doc.toJS() ?? {};
  const result = PolicyFileSchema.safeParse(data);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue.path.map(String);
  let key = path.join(".");
  let node = path.length > 0 ? doc.getIn(path, true) : undefined;
  if (issue.code === "unrecognized_keys") {
    key = [...path, issue.keys[0]].join(".");
    const parent = path.length > 0 ? doc.getIn(path, true) : doc.contents;
    node = findKeyNode(parent, issue.keys[0]);
    return fail(source, lineOf(node, lineCounter), `unknown key "${key}"`);
  }
  return fail(source, lineOf(node, lineCounter), `"${key || "(root)"}": ${issue.message}`);
}

/** Reads and parses a policy file from disk. */
export async function loadPolicyFile(path: string): Promise<PolicyFile> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    throw new PolicyFileError(`cannot read policy file ${path}: ${(err as Error).message}`);
  }
  return parsePolicy(text, path);
}

function fail(source: string, line: number | undefined, message: string): never {
  throw new PolicyFileError(`${source}${line ? `:${line}` : ""}: ${message}`);
}

interface Ranged {
  range?: [number, number, number] | null;
}

function lineOf(node: unknown, counter: LineCounter): number | undefined {
  const range = (node as Ranged | undefined)?.range;
  return range ? counter.linePos(range[0]).line : undefined;
}

function findKeyNode(parent: unknown, key: string): unknown {
  const items = (parent as { items?: { key?: { value?: unknown } }[] } | undefined)?.items;
  return items?.find((item) => item.key?.value === key)?.key;
}
