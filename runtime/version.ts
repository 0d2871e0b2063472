/** The runtime's version, reported to MCP clients and by `omotai --version`. */
export const VERSION = "0.1.0";
