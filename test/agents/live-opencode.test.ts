import { defineLiveSuite } from "../helpers/live-suite.js";

// The real opencode CLI (pinned in test/agent-clis) through its adapter, against caesar mock-model.
defineLiveSuite("opencode", { nativeReport: false, readOnly: "not-offered", readOnlyReportFile: true });
