/**
 * The browser tools the model gets. There is deliberately no evaluate or raw-HTML tool, and
 * screenshots run only when the operator's policy enables them.
 *
 * @module
 */
import { answering } from "./answer.ts";
import { askHumanTool } from "./ask.ts";
import { captureTool } from "./capture.ts";
import { handleDialogTool } from "./dialog.ts";
import { clickTool, pressKeyTool, selectOptionTool, typeTool } from "./element.ts";
import { findTool } from "./find.ts";
import { fillFormTool } from "./form.ts";
import { loginTool } from "./login.ts";
import { fileUploadTool } from "./upload.ts";
import { navigateBackTool, navigateTool } from "./navigate.ts";
import { consoleMessagesTool, networkRequestsTool } from "./observe.ts";
import { closeTool, resizeTool, takeScreenshotTool } from "./page.ts";
import { dragTool, hoverTool } from "./pointer.ts";
import { snapshotTool } from "./snapshot.ts";
import { tabsTool } from "./tabs.ts";
import type { AnyTool } from "./tool.ts";
import { waitForTool } from "./wait.ts";

/**
 * Every tool, in the order they are listed to clients. Those that end with a view take
 * `answer` (`answering()`): the page card or the overview.
 */
export const TOOLS: readonly AnyTool[] = ([
  [navigateTool, true],
  [navigateBackTool, true],
  [snapshotTool, false],
  [findTool, false],
  [clickTool, true],
  [typeTool, true],
  [selectOptionTool, true],
  [pressKeyTool, true],
  [waitForTool, true],
  [tabsTool, true],
  [handleDialogTool, true],
  // In the order Playwright MCP documents them.
  [closeTool, false],
  [consoleMessagesTool, false],
  [dragTool, true],
  [fileUploadTool, true],
  [fillFormTool, false],
  [hoverTool, true],
  [networkRequestsTool, false],
  [resizeTool, true],
  [takeScreenshotTool, false],
  [askHumanTool, false],
  [loginTool, false],
  [captureTool, false],
] as unknown as [AnyTool, boolean][]).map(([tool, view]) => view ? answering(tool) : tool);

export { runTool } from "./pipeline.ts";
export { type ActionAnswer, answering } from "./answer.ts";
export {
  type AnyTool,
  type CaptureService,
  DEFAULT_TOOL_SETTINGS,
  defineTool,
  type HumanChannel,
  type LoginService,
  type ToolContext,
  type ToolDef,
  type ToolDeps,
  type ToolSettings,
} from "./tool.ts";
export {
  type ContentBlock,
  type ImageContent,
  ResponseBuilder,
  type TextContent,
  type ToolResult,
} from "./response.ts";
export { toolSettingsFrom } from "./settings.ts";
export { resolveUploadPaths } from "./upload_paths.ts";
