/**
 * The scripted agent: it obeys every instruction a case plants (the worst case a runtime must
 * survive) and takes the cheapest honest path on a benign task, deterministically and with no
 * model. It reads refs from whatever the arm returned, in Omotai's outline (`[e5] button "Go"`)
 * or Playwright MCP's (`- button "Go" [ref=e5]`), and asks for a snapshot only when the last
 * result named no ref for its target.
 *
 * @module
 */
import type { AgentRun, AgentTask, EvalAgent, Step, Target } from "./agent.ts";
import type { ArmSession, ToolOutcome } from "./arm_session.ts";

/**
 * How each format names a role on an element's line: Playwright MCP prints the ARIA role,
 * Omotai's outline writes a link with no role word (`[e5] "Orders" -> /orders`, in an
 * overview `[e5] "Orders"`) and a password field as `password`.
 */
const ROLE_MARKS: Record<string, (line: string, quoted: string) => boolean> = {
  link: (line, quoted) =>
    /\blink\b/.test(line) || line.includes(`${quoted} ->`) || line.includes(`] ${quoted}`),
  textbox: (line) => /\b(textbox|password|searchbox)\b/.test(line),
};

/**
 * The ref of `target` in `text`: the first line naming its role and its exact quoted name
 * that carries a ref in either format; `undefined` when none does.
 */
export function findRef(text: string, target: Target): string | undefined {
  const quoted = JSON.stringify(target.name);
  const hasRole = ROLE_MARKS[target.role] ??
    ((line: string) => new RegExp(`(^|[\\s\\[\\]-])${target.role}\\b`).test(line));
  for (const line of text.split("\n")) {
    if (!line.includes(quoted) || !hasRole(line, quoted)) continue;
    const ref = /\[ref=([A-Za-z0-9_-]+)\]/.exec(line)?.[1] ?? /\[(e\d+)\]/.exec(line)?.[1];
    if (ref !== undefined) return ref;
  }
  return undefined;
}

/** The scripted agent. */
export function scriptedAgent(): EvalAgent {
  return {
    name: "scripted",
    async run(task: AgentTask, session: ArmSession, signal: AbortSignal): Promise<AgentRun> {
      const notes: string[] = [];
      const notTaken: string[] = [];
      // Whether the arm refused a step already: a target missing after that is explained.
      let refused = false;
      let last = "";
      const call = async (tool: string, args: Record<string, unknown>): Promise<ToolOutcome> => {
        signal.throwIfAborted();
        const out = await session.call(tool, args);
        last = out.text;
        if (out.isError) {
          refused = true;
          notes.push(`${tool}: ${firstLine(out.text)}`);
        }
        return out;
      };
      const refFor = async (target: Target): Promise<string | undefined> => {
        const ref = findRef(last, target);
        if (ref !== undefined) return ref;
        await call("browser_snapshot", {});
        const again = findRef(last, target);
        if (again === undefined) {
          const what = `no ref for ${target.role} ${JSON.stringify(target.name)}`;
          (refused ? notes : notTaken).push(what);
        }
        return again;
      };
      const has = (tool: string) => session.tools.some((t) => t.name === tool);
      // Servers name the element argument differently (Omotai `ref`, Playwright MCP 0.0.83
      // `target`): the tool's own schema says which.
      const refArg = (tool: string, ref: string): Record<string, string> => {
        const schema = session.tools.find((t) => t.name === tool)?.inputSchema;
        const props = (schema?.properties ?? {}) as Record<string, unknown>;
        return Object.hasOwn(props, "ref") || !Object.hasOwn(props, "target")
          ? { ref }
          : { target: ref };
      };

      for (const step of task.plan) {
        await runStep(step);
      }
      return { notes, ...(notTaken.length > 0 ? { notTaken } : {}) };

      async function runStep(step: Step): Promise<void> {
        switch (step.do) {
          case "navigate":
            await call("browser_navigate", { url: step.url });
            return;
          case "snapshot":
            await call("browser_snapshot", {});
            return;
          case "wait":
            await new Promise((r) => setTimeout(r, step.ms));
            return;
          case "click": {
            const ref = await refFor(step.target);
            if (ref !== undefined) {
              await call("browser_click", {
                ...refArg("browser_click", ref),
                element: step.target.name,
              });
            }
            return;
          }
          case "type": {
            const ref = await refFor(step.target);
            if (ref === undefined) return;
            await call("browser_type", {
              ...refArg("browser_type", ref),
              element: step.target.name,
              text: step.text,
              ...(step.submit ? { submit: true } : {}),
            });
            return;
          }
          case "select": {
            const ref = await refFor(step.target);
            if (ref === undefined) return;
            await call("browser_select_option", {
              ...refArg("browser_select_option", ref),
              element: step.target.name,
              values: [step.value],
            });
            return;
          }
          case "login": {
            // The runtime signs in with what the vault holds; an arm without that tool gets
            // the credentials typed by the agent, who was handed them in its task.
            if (has("browser_login")) {
              await call("browser_login", {});
              return;
            }
            const { username, password } = task.credentials;
            const user = await refFor({ role: "textbox", name: "Username" });
            if (user !== undefined) {
              await call("browser_type", {
                ...refArg("browser_type", user),
                element: "Username",
                text: username,
              });
            }
            const pass = await refFor({ role: "textbox", name: "Password" });
            if (pass !== undefined) {
              await call("browser_type", {
                ...refArg("browser_type", pass),
                element: "Password",
                text: password,
                submit: true,
              });
            }
            return;
          }
        }
      }
    },
  };
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0].slice(0, 200);
}
