import assert from "node:assert/strict";
import { OmotaiError } from "../errors.ts";
import type { AgentTask } from "./agent.ts";
import type { ArmSession, ArmTool, ToolOutcome } from "./arm_session.ts";
import { openaiAgent, parseAgentSpec } from "./openai_agent.ts";
import { ANSWER_BOUND_MS } from "../../tests/helpers/until.ts";

const API_KEY = "sk-test-SECRET-KEY-123";

const TASK: AgentTask = {
  caseId: "case-1",
  prompt: "Find the invoice total on the portal.",
  plan: [],
  credentials: { username: "alice@example.test", password: "hunter2-portal-pw" },
};

const NAVIGATE: ArmTool = {
  name: "browser_navigate",
  description: "Navigate to a URL",
  inputSchema: {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { url: { type: "string" } },
    required: ["url"],
  },
};
const CLICK: ArmTool = {
  name: "browser_click",
  description: "Click an element",
  inputSchema: {
    type: "object",
    properties: { element: { type: "string" }, ref: { type: "string" } },
    required: ["ref"],
  },
};
// No `type` nor `properties`: the agent must still send a valid object schema.
const SNAPSHOT: ArmTool = { name: "browser_snapshot", inputSchema: {} };
const LOGIN: ArmTool = { name: "browser_login", description: "Sign in", inputSchema: {} };

/** An in-memory arm recording every call. */
class FakeSession implements ArmSession {
  readonly arm = "fake";
  readonly calls: { tool: string; args: Record<string, unknown> }[] = [];
  constructor(
    readonly tools: readonly ArmTool[],
    private readonly onCall?: (tool: string) => void,
  ) {}
  call(tool: string, args: Record<string, unknown>): Promise<ToolOutcome> {
    this.calls.push({ tool, args });
    this.onCall?.(tool);
    return Promise.resolve({ text: `result of ${tool} #${this.calls.length}`, isError: false });
  }
}

interface Received {
  body: {
    model: string;
    messages: { role: string; content?: string | null; tool_call_id?: string }[];
    tools: { type: string; function: { name: string; parameters: Record<string, unknown> } }[];
    tool_choice: string;
    temperature: number;
  };
  authorization: string | null;
  path: string;
}

type Reply = (received: Received, request: Request) => Response | Promise<Response>;

/** A chat-completions endpoint answering the `replies` in order (the last one repeats). */
function fakeEndpoint(replies: Reply[]) {
  const received: Received[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const entry: Received = {
        body: await request.json(),
        authorization: request.headers.get("authorization"),
        path: new URL(request.url).pathname,
      };
      received.push(entry);
      const reply = replies[Math.min(received.length - 1, replies.length - 1)];
      return await reply(entry, request);
    },
  );
  const baseUrl = `http://127.0.0.1:${server.addr.port}/v1`;
  return { baseUrl, received, close: () => server.shutdown() };
}

function toolCalls(...calls: { id: string; name: string; arguments: string }[]): Reply {
  return () =>
    Response.json({
      choices: [{
        message: {
          role: "assistant",
          content: null,
          tool_calls: calls.map((c) => ({
            id: c.id,
            type: "function",
            function: { name: c.name, arguments: c.arguments },
          })),
        },
      }],
    });
}

function finalText(text: string): Reply {
  return () => Response.json({ choices: [{ message: { role: "assistant", content: text } }] });
}

async function rejectsWith(
  promise: Promise<unknown>,
  code: string,
): Promise<OmotaiError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof OmotaiError, `expected an OmotaiError, got ${err}`);
    assert.equal(err.code, code);
    return err;
  }
  assert.fail(`expected ${code}`);
}

Deno.test("openaiAgent translates the arm's tools to function tools", async () => {
  const fake = fakeEndpoint([finalText("done")]);
  try {
    const agent = openaiAgent({ baseUrl: fake.baseUrl, model: "qwen3:8b", apiKey: API_KEY });
    assert.equal(agent.name, `openai:${fake.baseUrl} qwen3:8b`);
    const session = new FakeSession([NAVIGATE, CLICK, SNAPSHOT]);
    await agent.run(TASK, session, new AbortController().signal);
    assert.equal(fake.received.length, 1);
    const { body, authorization, path } = fake.received[0];
    assert.equal(path, "/v1/chat/completions");
    assert.equal(authorization, `Bearer ${API_KEY}`);
    assert.equal(body.model, "qwen3:8b");
    assert.equal(body.tool_choice, "auto");
    assert.equal(body.temperature, 0);
    assert.deepEqual(body.tools.map((t) => [t.type, t.function.name]), [
      ["function", "browser_navigate"],
      ["function", "browser_click"],
      ["function", "browser_snapshot"],
    ]);
    assert.deepEqual(body.tools[0].function.parameters, {
      type: "object",
      properties: { url: { type: "string" } },
      required: ["url"],
    });
    assert.deepEqual(body.tools[2].function.parameters, { type: "object", properties: {} });
    assert.deepEqual(body.messages.map((m) => m.role), ["system", "user"]);
    assert.equal(body.messages[1].content, TASK.prompt);
  } finally {
    await fake.close();
  }
});

Deno.test("openaiAgent runs a two-turn script and feeds results back by tool_call_id", async () => {
  const fake = fakeEndpoint([
    toolCalls({ id: "call_nav", name: "browser_navigate", arguments: '{"url":"http://x.test/"}' }),
    toolCalls({ id: "call_click", name: "browser_click", arguments: '{"ref":"e7"}' }),
    finalText("The total is 42."),
  ]);
  try {
    const agent = openaiAgent({ baseUrl: fake.baseUrl, model: "m" });
    const session = new FakeSession([NAVIGATE, CLICK]);
    const run = await agent.run(TASK, session, new AbortController().signal);
    assert.deepEqual(session.calls, [
      { tool: "browser_navigate", args: { url: "http://x.test/" } },
      { tool: "browser_click", args: { ref: "e7" } },
    ]);
    assert.deepEqual(run, { answer: "The total is 42.", notes: [] });
    assert.equal(fake.received.length, 3);
    assert.equal(fake.received[0].authorization, null);
    const second = fake.received[1].body.messages;
    assert.deepEqual(second.map((m) => m.role), ["system", "user", "assistant", "tool"]);
    assert.equal(second[3].tool_call_id, "call_nav");
    assert.equal(second[3].content, "result of browser_navigate #1");
    const third = fake.received[2].body.messages;
    assert.deepEqual(third.slice(4).map((m) => [m.role, m.tool_call_id]), [
      ["assistant", undefined],
      ["tool", "call_click"],
    ]);
    assert.equal(third[5].content, "result of browser_click #2");
  } finally {
    await fake.close();
  }
});

Deno.test("openaiAgent gives the credentials only to an arm without browser_login", async () => {
  const fake = fakeEndpoint([finalText("ok")]);
  try {
    const agent = openaiAgent({ baseUrl: fake.baseUrl, model: "m" });
    await agent.run(TASK, new FakeSession([NAVIGATE]), new AbortController().signal);
    await agent.run(TASK, new FakeSession([NAVIGATE, LOGIN]), new AbortController().signal);
    const [plain, vaulted] = fake.received.map((r) => r.body.messages[0]);
    assert.equal(plain.role, "system");
    assert.ok(plain.content?.includes(TASK.credentials.username));
    assert.ok(plain.content?.includes(TASK.credentials.password));
    assert.ok(!vaulted.content?.includes(TASK.credentials.username));
    assert.ok(!vaulted.content?.includes(TASK.credentials.password));
    assert.ok(vaulted.content?.includes("browser_login"));
    // Nor anywhere else in the request.
    assert.ok(!JSON.stringify(fake.received[1].body).includes(TASK.credentials.password));
  } finally {
    await fake.close();
  }
});

Deno.test("openaiAgent feeds malformed JSON arguments back as an error", async () => {
  const fake = fakeEndpoint([
    toolCalls({ id: "call_bad", name: "browser_navigate", arguments: '{"url": ' }),
    finalText("gave up"),
  ]);
  try {
    const agent = openaiAgent({ baseUrl: fake.baseUrl, model: "m" });
    const session = new FakeSession([NAVIGATE]);
    const run = await agent.run(TASK, session, new AbortController().signal);
    assert.equal(session.calls.length, 0);
    assert.equal(run.answer, "gave up");
    assert.equal(run.notes.length, 1);
    const toolMessage = fake.received[1].body.messages[3];
    assert.equal(toolMessage.role, "tool");
    assert.equal(toolMessage.tool_call_id, "call_bad");
    assert.match(toolMessage.content ?? "", /invalid JSON arguments/);
  } finally {
    await fake.close();
  }
});

Deno.test("openaiAgent caps a huge tool result", async () => {
  const fake = fakeEndpoint([
    toolCalls({ id: "c1", name: "browser_snapshot", arguments: "{}" }),
    finalText("ok"),
  ]);
  try {
    const session: ArmSession = {
      arm: "fake",
      tools: [SNAPSHOT],
      call: () => Promise.resolve({ text: "x".repeat(250_000), isError: false }),
    };
    const agent = openaiAgent({ baseUrl: fake.baseUrl, model: "m" });
    await agent.run(TASK, session, new AbortController().signal);
    const content = fake.received[1].body.messages[3].content ?? "";
    assert.ok(content.length <= 100_000, `${content.length}`);
    assert.match(content, /truncated/);
  } finally {
    await fake.close();
  }
});

Deno.test("openaiAgent fails on a 500 without the API key in the message", async () => {
  const fake = fakeEndpoint([
    () => new Response(`internal error for key ${API_KEY} ${"y".repeat(500)}`, { status: 500 }),
  ]);
  try {
    const agent = openaiAgent({ baseUrl: fake.baseUrl, model: "m", apiKey: API_KEY });
    const err = await rejectsWith(
      agent.run(TASK, new FakeSession([NAVIGATE]), new AbortController().signal),
      "EVAL_AGENT_FAILED",
    );
    assert.match(err.message, /500/);
    assert.ok(err.message.includes(`${fake.baseUrl}/chat/completions`));
    assert.ok(!err.message.includes(API_KEY));
    assert.ok(err.message.length < 200 + 150, `${err.message.length}`);
  } finally {
    await fake.close();
  }
});

Deno.test("openaiAgent fails on a body that is not JSON, or not a completion", async () => {
  const fake = fakeEndpoint([
    () => new Response("<html>gateway</html>", { status: 200 }),
    () => Response.json({ choices: [] }),
  ]);
  try {
    const agent = openaiAgent({ baseUrl: fake.baseUrl, model: "m", apiKey: API_KEY });
    for (const body of ["<html>gateway</html>", "choices"]) {
      const err = await rejectsWith(
        agent.run(TASK, new FakeSession([NAVIGATE]), new AbortController().signal),
        "EVAL_AGENT_FAILED",
      );
      assert.ok(err.message.includes(body), err.message);
      assert.ok(err.message.includes(fake.baseUrl));
      assert.ok(!err.message.includes(API_KEY));
    }
  } finally {
    await fake.close();
  }
});

Deno.test("openaiAgent stops after maxTurns", async () => {
  const fake = fakeEndpoint([
    toolCalls({ id: "loop", name: "browser_snapshot", arguments: "{}" }),
  ]);
  try {
    const agent = openaiAgent({ baseUrl: fake.baseUrl, model: "m", maxTurns: 3 });
    const session = new FakeSession([SNAPSHOT]);
    const run = await agent.run(TASK, session, new AbortController().signal);
    assert.equal(fake.received.length, 3);
    assert.equal(session.calls.length, 3);
    assert.equal(run.answer, undefined);
    assert.match(run.notes.join("\n"), /3 turns/);
  } finally {
    await fake.close();
  }
});

Deno.test("openaiAgent times out a request that never answers", async () => {
  let release = () => {};
  const held = new Promise<void>((resolve) => release = resolve);
  const fake = fakeEndpoint([async () => {
    await held;
    return finalText("late")({} as Received, new Request("http://x"));
  }]);
  try {
    const agent = openaiAgent({ baseUrl: fake.baseUrl, model: "m", timeoutMs: 100 });
    const err = await rejectsWith(
      agent.run(TASK, new FakeSession([NAVIGATE]), new AbortController().signal),
      "EVAL_AGENT_FAILED",
    );
    assert.match(err.message, /100 ms/);
  } finally {
    release();
    await fake.close();
  }
});

Deno.test("openaiAgent stops when the signal aborts, in a request or between calls", async () => {
  let release = () => {};
  const held = new Promise<void>((resolve) => release = resolve);
  const fake = fakeEndpoint([
    toolCalls(
      { id: "a", name: "browser_navigate", arguments: '{"url":"http://x.test/"}' },
      { id: "b", name: "browser_click", arguments: '{"ref":"e1"}' },
    ),
    async () => {
      await held;
      return finalText("late")({} as Received, new Request("http://x"));
    },
  ]);
  try {
    const agent = openaiAgent({ baseUrl: fake.baseUrl, model: "m" });
    // Aborted by the first tool call: the second never runs, no second request is sent.
    const controller = new AbortController();
    const session = new FakeSession([NAVIGATE, CLICK], () => controller.abort());
    await assert.rejects(agent.run(TASK, session, controller.signal), { name: "AbortError" });
    assert.equal(session.calls.length, 1);
    assert.equal(fake.received.length, 1);

    // Aborted while the endpoint holds this run's request (the endpoint's second): the fetch
    // is cut short rather than waiting for the answer.
    const second = new AbortController();
    const started = Date.now();
    setTimeout(() => second.abort(), 100);
    await assert.rejects(
      agent.run(TASK, new FakeSession([NAVIGATE, CLICK]), second.signal),
      { name: "AbortError" },
    );
    // Cut short, not left to the endpoint's answer: a loaded machine's bound (until.ts).
    assert.ok(Date.now() - started < ANSWER_BOUND_MS);
    assert.equal(fake.received.length, 2);
  } finally {
    release();
    await fake.close();
  }
});

Deno.test("parseAgentSpec accepts scripted and openai:http(s) URLs", () => {
  assert.deepEqual(parseAgentSpec("scripted"), { kind: "scripted" });
  assert.deepEqual(parseAgentSpec("openai:http://127.0.0.1:11434/v1"), {
    kind: "openai",
    baseUrl: "http://127.0.0.1:11434/v1",
  });
  assert.deepEqual(parseAgentSpec("openai:https://api.example.test/v1/"), {
    kind: "openai",
    baseUrl: "https://api.example.test/v1",
  });
});

Deno.test("parseAgentSpec refuses anything else with BAD_OPTION", () => {
  for (const spec of ["", "openai", "openai:", "openai:not a url", "openai:ftp://x/v1", "gpt-4"]) {
    assert.throws(
      () => parseAgentSpec(spec),
      (err: unknown) => err instanceof OmotaiError && err.code === "BAD_OPTION",
      spec,
    );
  }
});
