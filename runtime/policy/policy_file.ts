/**
 * The YAML policy file: parsed strictly, so an unknown key or a bad type is refused with a
 * message that names the key and its line.
 *
 * @module
 */
import { isAbsolute } from "node:path";
import { LineCounter, parseDocument } from "yaml";
import { z } from "zod";
import { PolicyFileError } from "../mod.ts";
import { canonicalPath, normalizeOrigin } from "../net/mod.ts";
import { CaptureTemplatesSchema } from "./capture_templates.ts";

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

const deniedPathSchema = z.strictObject({
  /** An origin, or "*" for every origin. */
  origin: z.union([z.literal("*"), originSchema]),
  /** A path prefix, matched on whole segments after canonicalization. */
  path_prefix: z.string().startsWith("/").transform((p) => canonicalPath(p)),
});

const moduleSchema = z.strictObject({
  /** A .wasm file (its signature is `<path>.sig.json`), relative to the policy file, or
   * `bundled:<name>` for a module shipped with the runtime. */
  path: z.string().min(1),
  /** Extra config merged over the policy keys handed to the module. */
  config: z.record(z.string(), z.unknown()).optional(),
});

const secretIdSchema = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, "a vault secret id");

const absoluteDirSchema = z.string().min(1).refine(
  (p) => isAbsolute(p) && !p.includes("\0"),
  "must be an absolute path",
);

/** Schema of the policy file. */
export const PolicyFileSchema = z.strictObject({
  /** Origins the agent may browse. */
  allowed_origins: z.array(originSchema).default([]),
  /** Paths never reachable, per origin. */
  denied_paths: z.array(deniedPathSchema).default([]),
  /** Refuse writes (non-GET form submits, non-GET/HEAD requests). */
  read_only: z.boolean().default(true),
  /**
   * Origins a page may open a WebSocket to under `read_only` (a socket carries writes the
   * proxy cannot tell from reads); elsewhere every upgrade is refused with WEBSOCKET_REFUSED.
   */
  websockets: z.array(originSchema).default([]),
  /**
   * What the request guard pauses with CDP `Fetch`: nothing (`proxy`, the default: the
   * egress proxy, which sees inside TLS, judges every request whole), `documents`, or `all`
   * requests, judged with their frame's and initiator's page facts as well
   * (docs/egress.md: the cost of each, and what each judges with).
   */
  request_guard: z.enum(["all", "documents", "proxy"]).default("proxy"),
  /** With read_only, ask a human instead of refusing a form submit. */
  confirm_writes: z.boolean().default(false),
  /**
   * With read_only, whether a write a page's script sends during an agent's action (fetch,
   * XHR, beacon) may be held and shown to the operator like a form's own submission
   * (`confirm`), or is refused at once (`refuse`, the default: SCRIPT_WRITE_REFUSED).
   */
  script_writes: z.enum(["refuse", "confirm"]).default("refuse"),
  /**
   * With read_only, the origins a runtime login (browser_login, the startup login) may
   * submit its form to; unset: the origin its credentials are bound to (the grant's, the
   * startup `login.url`'s). Any other: LOGIN_ORIGIN_NOT_NAMED.
   */
  login_submit_origins: z.array(originSchema).optional(),
  /** How long an approval may take before it counts as denied. */
  confirm_timeout_seconds: z.int().min(1).max(3_600).default(120),
  /** How many approvals a session may ask for (0: none). */
  max_confirmations: z.int().min(0).max(10_000).default(10),
  /** Agent actions per session (0: unlimited). */
  max_actions: z.int().min(0).default(0),
  /** Seconds a session may act (0: unlimited). */
  max_seconds: z.int().min(0).default(0),
  /**
   * Sessions one agent under this policy may hold at once on a runtime (0: none of its own,
   * only `--max-sessions`); unset: its default share of `--max-sessions`
   * (`cli/session_cap.ts`). One more is `AGENT_BUSY`. Read by the runtime, not by modules.
   */
  max_sessions: z.int().min(0).max(10_000).optional(),
  /**
   * A login the runtime performs at the start of every session, before the agent's first
   * action (docs/login.md): values from the vault, typed by the runtime on `url`'s origin.
   */
  login: z.strictObject({
    url: z.url(),
    /** A literal username, or `username_secret`, a vault secret id (not both). */
    username: z.string().min(1).max(256).optional(),
    username_secret: secretIdSchema.optional(),
    password_secret: secretIdSchema,
    totp_secret: secretIdSchema.optional(),
    /** The username field on sites without autocomplete hints (the operator's, never the model's). */
    username_selector: z.string().min(1).max(500).optional(),
    /** Where a push challenge shows its vendor and match number. */
    push: z.strictObject({
      vendor_selector: z.string().min(1).max(500),
      number_selector: z.string().min(1).max(500),
    }).optional(),
    /** Whether the startup login taints the session: `none` (the default) or `session`. */
    taint_after_login: z.enum(["session", "none"]).default("none"),
  }).refine((l) => !(l.username && l.username_secret), {
    message: "give username or username_secret, not both",
  }).optional(),
  /** Base64 Ed25519 public keys whose signatures are trusted; default: the project key. */
  trusted_keys: z.array(z.string().regex(/^[A-Za-z0-9+/]{43}=$/, "a base64 Ed25519 public key"))
    .optional(),
  /** Policy modules to load; default: the bundled baseline. */
  modules: z.array(moduleSchema).min(1).optional(),
  /**
   * Whether browser_login taints the session (then only status-only snapshots and
   * browser_close run until it ends): `session` (the default) or `none`.
   */
  taint_after_login: z.enum(["session", "none"]).default("session"),
  /** Whether browser_take_screenshot may run (never in a tainted session). */
  screenshots: z.boolean().default(false),
  /** Absolute directory files may be uploaded from; without it uploads are refused. */
  upload_dir: absoluteDirSchema.optional(),
  /**
   * Whether the model's text may land in a password field (browser_type, browser_fill_form,
   * browser_press_key): for sign-up flows. Off by default: PASSWORD_FIELD.
   */
  model_may_type_passwords: z.boolean().default(false),
  /**
   * What the model is shown: `action_answer`, what an action (navigate, click, type…)
   * answers with unless the call says, `card` (the default: a short page card) or
   * `overview` (the page view). A setting of the tools, not handed to modules.
   */
  views: z.strictObject({
    action_answer: z.enum(["card", "overview"]).optional(),
  }).optional(),
  /**
   * Whether a session may start only with its browser in a network namespace of its own
   * (`isolation: netns`) and a cgroup of its own; on a machine that cannot give both, the
   * session is refused: ISOLATION_UNAVAILABLE. Off by default: the runtime says why and runs
   * without.
   */
  require_isolation: z.boolean().default(false),
  /**
   * Bounds on each browser, read from the runtime's own policy only. The kernel's, on its
   * cgroup (docs/isolation.md): `browser_memory_mb`, unset: sized from the machine's memory
   * and the session cap. The runtime's own, on what one browser may make it take in
   * (docs/policy-file.md, "limits"): CDP events and held request bodies, in bytes per second
   * and bytes at once above that; a browser over a rate for `flood_seconds` is ended
   * (SESSION_FLOODING). Unset keys keep the measured defaults.
   */
  limits: z.strictObject({
    /** The browser's memory limit in MiB, every process of it together, without swap. */
    browser_memory_mb: z.int().min(128).max(1_048_576).optional(),
    cdp_bytes_per_sec: z.int().min(64 * 1024).max(1024 * 1024 * 1024).optional(),
    cdp_burst_bytes: z.int().min(0).max(4 * 1024 * 1024 * 1024).optional(),
    held_body_bytes_per_sec: z.int().min(64 * 1024).max(1024 * 1024 * 1024).optional(),
    held_body_burst_bytes: z.int().min(0).max(4 * 1024 * 1024 * 1024).optional(),
    flood_seconds: z.int().min(1).max(3_600).optional(),
  }).optional(),
  /**
   * The SHA-256 of the browser executable (its binary, symlinks resolved): any other build is
   * refused, at the start and before each launch (`BROWSER_PIN_MISMATCH`). Read from the
   * runtime's own policy (`--policy`); it pins the browser of every session.
   */
  browser_sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, "a SHA-256 of 64 hex digits").optional(),
  /**
   * The operator's templates for generated-credential capture (`browser_capture_credentials`,
   * docs/capture.md): what each workflow registers with its vendor; a workflow without one
   * is refused (CAPTURE_UNCONFIGURED).
   */
  capture: CaptureTemplatesSchema.optional(),
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
  // A misspelled key explains a "missing" one, so unknown keys are reported first.
  const issue = result.error.issues.find((i) => i.code === "unrecognized_keys") ??
    result.error.issues[0];
  const path = issue.path.map(String);
  let key = path.join(".");
  let node: unknown;
  // A missing key has no node: point at the closest ancestor that exists.
  for (let n = path.length; n > 0 && !node; n--) node = doc.getIn(path.slice(0, n), true);
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
