import { defineLiveSuite } from "../helpers/live-suite.js";

// The real gemini CLI (pinned in test/agent-clis) through its adapter, against caesar mock-model.
defineLiveSuite("gemini", { nativeReport: false, readOnly: "not-offered" });
