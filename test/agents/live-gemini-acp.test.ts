import { defineLiveAcpSuite } from "../helpers/live-acp-suite.js";

// The real gemini CLI's ACP mode (pinned in test/agent-clis), driven by `caesar run` against caesar mock-model.
defineLiveAcpSuite("gemini-acp", { readOnlyShell: "policy" });
