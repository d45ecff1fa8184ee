import { defineLiveSuite } from "../helpers/live-suite.js";

// The real codex CLI (pinned in test/agent-clis) through its adapter, against caesar mock-model.
defineLiveSuite("codex", { nativeReport: true, readOnly: "silent" });
