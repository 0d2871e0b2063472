/**
 * The legacy MCP SSE transport (`GET /sse` + `POST /messages`) on Hono's `streamSSE`,
 * implementing the SDK's `Transport` interface (the SDK's own needs `node:http`).
 *
 * @module
 */
import type { SSEStreamingApi } from "hono/streaming";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/types"
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { OmotaiError } from "../mod.ts";

const KEEPALIVE_MS = 20_000;

/** One SSE connection. */
export class SseServerTransport implements Transport {
  readonly sessionId: string = crypto.randomUUID();
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Resolves when the connection has closed. */
  readonly closed: Promise<void>;
  #stream: SSEStreamingApi;
  #endpoint: string;
  #isClosed = false;
  #resolveClosed!: () => void;
  #keepalive: ReturnType<typeof setInterval> | undefined;

  constructor(stream: SSEStreamingApi, endpoint: string) {
    this.#stream = stream;
    this.#endpoint = endpoint;
    this.closed = new Promise((r) => this.#resolveClosed = r);
    stream.onAbort(() => void this.close());
  }

  async start(): Promise<void> {
    await this.#stream.writeSSE({
      event: "endpoint",
      data: `${this.#endpoint}?sessionId=${this.sessionId}`,
    });
    this.#keepalive = setInterval(() => {
      this.#stream.write(": keepalive\n\n").catch(() => void this.close());
    }, KEEPALIVE_MS);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#isClosed) throw new OmotaiError("SSE_CLOSED", "SSE connection closed");
    await this.#stream.writeSSE({ event: "message", data: JSON.stringify(message) });
  }

  /** Delivers a POSTed message; returns an error text when it is not JSON-RPC. */
  receive(body: unknown): string | undefined {
    const parsed = JSONRPCMessageSchema.safeParse(body);
    if (!parsed.success) return "the body is not a JSON-RPC message";
    this.onmessage?.(parsed.data);
    return undefined;
  }

  close(): Promise<void> {
    if (this.#isClosed) return Promise.resolve();
    this.#isClosed = true;
    clearInterval(this.#keepalive);
    this.#stream.close().catch(() => {});
    this.#resolveClosed();
    try {
      this.onclose?.();
    } catch (err) {
      // Called from the stream's abort event: a throw there would escape the runtime.
      this.onerror?.(err instanceof Error ? err : new OmotaiError("SSE_CLOSE_FAILED", String(err)));
    }
    return Promise.resolve();
  }
}
