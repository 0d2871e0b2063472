/**
 * The browser tools the model gets. There is deliberately no evaluate or raw-HTML tool, and
 * screenshots run only when the operator's policy enables them.
 *
 * @module
 */
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

/** Every tool, in the order they are listed to clients. */
export const TOOLS: readonly AnyTool[] = [
  navigateTool,
  navigateBackTool,
  snapshotTool,
  findTool,
  clickTool,
  typeTool,
  selectOptionTool,
  pressKeyTool,
  waitForTool,
  tabsTool,
  handleDialogTool,
  // In the order Playwright MCP documents them.
  closeTool,
  consoleMessagesTool,
  dragTool,
  fileUploadTool,
  fillFormTool,
  hoverTool,
  networkRequestsTool,
  resizeTool,
  takeScreenshotTool,
  askHumanTool,
  loginTool,
  captureTool,
] as unknown as readonly AnyTool[];

export { runTool } from "./pipeline.ts";
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
