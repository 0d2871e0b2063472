/**
 * The browser tools the model gets. There is deliberately no evaluate, raw-HTML or
 * screenshot tool.
 *
 * @module
 */
import { handleDialogTool } from "./dialog.ts";
import { clickTool, pressKeyTool, selectOptionTool, typeTool } from "./element.ts";
import { navigateBackTool, navigateTool } from "./navigate.ts";
import { snapshotTool } from "./snapshot.ts";
import { tabsTool } from "./tabs.ts";
import type { AnyTool } from "./tool.ts";
import { waitForTool } from "./wait.ts";

/** Every tool, in the order they are listed to clients. */
export const TOOLS: readonly AnyTool[] = [
  navigateTool,
  navigateBackTool,
  snapshotTool,
  clickTool,
  typeTool,
  selectOptionTool,
  pressKeyTool,
  waitForTool,
  tabsTool,
  handleDialogTool,
] as unknown as readonly AnyTool[];

export {
  type AnyTool,
  DEFAULT_TOOL_SETTINGS,
  defineTool,
  runTool,
  type ToolContext,
  type ToolDef,
  type ToolDeps,
  type ToolSettings,
} from "./tool.ts";
export { ResponseBuilder, type ToolResult } from "./response.ts";
