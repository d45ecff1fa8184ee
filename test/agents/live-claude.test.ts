import { defineLiveSuite } from "../helpers/live-suite.js";

// The real claude CLI (pinned in test/agent-clis) through its adapter, against caesar mock-model.
defineLiveSuite("claude", { nativeReport: true, readOnly: "denied", readOnlyReportFile: true });
