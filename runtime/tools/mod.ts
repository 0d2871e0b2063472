/**
 * The browser tools the model gets. There is deliberately no evaluate, raw-HTML or
 * screenshot tool.
 *
 * @module
 */
import { clickTool, pressKeyTool, selectOptionTool, typeTool } from "./element.ts";
import { navigateBackTool, navigateTool } from "./navigate.ts";
import { snapshotTool } from "./snapshot.ts";
import { tabsTool } from "./tabs.ts";
import type { ToolDef } from "./tool.ts";
import { waitForTool } from "./wait.ts";

/** Every tool, in the order they are listed to clients. */
export const TOOLS: readonly ToolDef[] = [
  navigateTool,
  navigateBackTool,
  snapshotTool,
  clickTool,
  typeTool,
  selectOptionTool,
  pressKeyTool,
  waitForTool,
  tabsTool,
] as unknown as readonly ToolDef[];

export { defineTool, runTool, type ToolContext, type ToolDef } from "./tool.ts";
export { ResponseBuilder, type ToolResult } from "./response.ts";
