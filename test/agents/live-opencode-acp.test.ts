import { defineLiveAcpSuite } from "../helpers/live-acp-suite.js";

// The real opencode CLI's ACP mode (pinned in test/agent-clis), driven by `caesar run` against caesar mock-model.
defineLiveAcpSuite("opencode-acp", { readOnlyShell: "policy" });
