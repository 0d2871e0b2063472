import assert from "node:assert/strict";
import { PolicyFileError } from "../errors.ts";
import { parsePolicy } from "./policy_file.ts";

const GITHUB = `capture:
  github_app:
    manifest:
      name: Deploy bot
      url: https://example.com
      hook_attributes:
        url: https://example.com/hooks
      default_events: [push]
`;

Deno.test("CaptureTemplatesSchema keeps the operator's manifest and defaults to github.com", () => {
  const policy = parsePolicy(GITHUB);
  const gh = policy.capture?.github_app;
  assert.equal(gh?.base_url, "https://github.com");
  assert.equal(gh?.manifest.name, "Deploy bot");
  assert.deepEqual((gh?.manifest as Record<string, unknown>).default_events, ["push"]);
  assert.equal(parsePolicy("").capture, undefined);
});

Deno.test("CaptureTemplatesSchema refuses what the runtime owns or needs, naming the key", () => {
  const vectors: [string, string, RegExp][] = [
    [
      "a redirect_url (the runtime's own)",
      GITHUB.replace(
        "      default_events",
        "      redirect_url: https://evil.test\n      default_events",
      ),
      /redirect_url/,
    ],
    [
      "no hook_attributes (a webhook secret is captured)",
      GITHUB.replace(/ {6}hook_attributes:\n {8}url: \S+\n/, ""),
      /hook_attributes/,
    ],
    ["an unknown workflow", "capture:\n  jira_app: {}\n", /unknown key "capture.jira_app"/],
    [
      "a Linear template without callback URLs",
      "capture:\n  linear_oauth_app:\n    registration_url: https://linear.app/a/settings/api/applications/new\n    application:\n      name: a\n      developer: b\n      developer_url: https://b.test\n      callback_urls: []\n",
      /callback_urls/,
    ],
    [
      "a registration page that is not http(s)",
      "capture:\n  linear_oauth_app:\n    registration_url: javascript:alert(1)\n    application:\n      name: a\n      developer: b\n      developer_url: https://b.test\n      callback_urls: [https://b.test/cb]\n",
      /registration_url/,
    ],
    [
      "an organization that is not a GitHub login",
      GITHUB.replace("    manifest:", "    organization: ../../evil\n    manifest:"),
      /organization/,
    ],
  ];
  for (const [name, yaml, message] of vectors) {
    assert.throws(
      () => parsePolicy(yaml),
      (e) => e instanceof PolicyFileError && message.test(e.message),
      name,
    );
  }
});
