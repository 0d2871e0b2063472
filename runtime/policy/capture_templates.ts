/**
 * The operator's templates for generated-credential capture (the policy's `capture:` key):
 * what each reviewed workflow registers with its vendor, and where. The model names a
 * workflow and its grants; everything a vendor is sent comes from here.
 *
 * - `github_app`: a GitHub App made by GitHub's manifest flow, on github.com or a GitHub
 *   Enterprise Server (`base_url`). The runtime owns the manifest's `redirect_url` (the one-time
 *   code comes back to the vendor's own origin, where the runtime reads it), so the template
 *   may not set it, and it must set `hook_attributes` (the workflow captures a webhook secret).
 * - `linear_oauth_app`: a Linear OAuth application registered on `registration_url`.
 *
 * @module
 */
import { z } from "zod";

const httpsUrl = z.url().refine((u) => /^https?:\/\//i.test(u), "must be an http(s) URL");

const nameField = z.string().min(1).max(200);

/** The `github_app` workflow's settings. */
const GithubAppTemplateSchema = z.strictObject({
  /** The vendor's web origin: `https://github.com` or a GitHub Enterprise Server's. */
  base_url: httpsUrl.default("https://github.com"),
  /**
   * The REST API's base (conversions are posted there); default `https://api.github.com` for
   * github.com and `<base_url>/api/v3` for an Enterprise Server.
   */
  api_url: httpsUrl.optional(),
  /** Register the app under this organization instead of the signed-in user. */
  organization: z.string().regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/, "a GitHub login")
    .optional(),
  /** GitHub's manifest fields (name, url, hook_attributes, permissions, events...). */
  manifest: z.looseObject({
    name: nameField,
    url: httpsUrl,
    hook_attributes: z.looseObject({ url: httpsUrl }),
  }).refine((m) => !("redirect_url" in m), {
    message: "the runtime sets redirect_url (the code comes back to the vendor's origin)",
  }),
});

/** The `linear_oauth_app` workflow's settings. */
const LinearOauthAppTemplateSchema = z.strictObject({
  /** The workspace's "new OAuth application" page (e.g. https://linear.app/ACME/settings/api/applications/new). */
  registration_url: httpsUrl,
  /** What the registration form is filled with. */
  application: z.strictObject({
    name: nameField,
    developer: nameField,
    developer_url: httpsUrl,
    description: z.string().max(2_000).default(""),
    callback_urls: z.array(httpsUrl).min(1).max(20),
  }),
});

/** Schema of the policy's `capture:` key. */
export const CaptureTemplatesSchema = z.strictObject({
  github_app: GithubAppTemplateSchema.optional(),
  linear_oauth_app: LinearOauthAppTemplateSchema.optional(),
});

/** The `github_app` template, validated. */
export type GithubAppTemplate = z.infer<typeof GithubAppTemplateSchema>;
/** The `linear_oauth_app` template, validated. */
export type LinearOauthAppTemplate = z.infer<typeof LinearOauthAppTemplateSchema>;
/** The policy's capture templates, validated. */
export type CaptureTemplates = z.infer<typeof CaptureTemplatesSchema>;
