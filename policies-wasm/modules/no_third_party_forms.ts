// Example module: a form may only be typed into or submitted when it posts back to the
// origin of the frame it sits in. Never allows on its own account beyond that fact.
import { Host } from "@extism/as-pdk";
import { at, isNull, str } from "../lib/json";
import { answer } from "../lib/verdict";
export { abortHandler } from "../lib/verdict";

export function verdict(): i32 {
  const facts = Host.inputString();
  if (isNull(facts, at(facts, "form"))) return answer("allow", "OK", "");
  const action = str(facts, "form.action_origin");
  const frame = str(facts, "frame.origin");
  if (action == null || frame == null || action != frame) {
    return answer("deny", "FORM_THIRD_PARTY", "form posts to another origin");
  }
  return answer("allow", "OK", "");
}
