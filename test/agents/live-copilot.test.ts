import { defineLiveSuite } from "../helpers/live-suite.js";

// The real copilot CLI (pinned in test/agent-clis) through its adapter, against caesar mock-model.
defineLiveSuite("copilot", { nativeReport: false, readOnly: "denied" });
