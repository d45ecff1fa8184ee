import { defineLiveAcpSuite } from "../helpers/live-acp-suite.js";

// The real codex CLI's ACP mode (pinned in test/agent-clis), driven by `caesar run` against caesar mock-model.
defineLiveAcpSuite("codex-acp", { readOnlyShell: "sandbox" });
