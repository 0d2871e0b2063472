/**
 * The tool settings an operator's policy file sets: what tools may do beyond browsing.
 *
 * @module
 */
import type { PolicyFile } from "../policy/mod.ts";
import type { ToolSettings } from "./tool.ts";

/**
 * The tool settings of `policy`: screenshots only when enabled, uploads only from its dir,
 * password fields only when opted in; what actions answer with.
 */
export function toolSettingsFrom(policy: PolicyFile): ToolSettings {
  const settings: ToolSettings = {
    screenshots: policy.screenshots,
    askTimeoutMs: policy.confirm_timeout_seconds * 1000,
  };
  if (policy.upload_dir !== undefined) settings.uploadDir = policy.upload_dir;
  if (policy.model_may_type_passwords) settings.modelMayTypePasswords = true;
  if (policy.views?.action_answer) settings.actionAnswer = policy.views.action_answer;
  return settings;
}
