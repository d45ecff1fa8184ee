// The layers of docs/architecture.md, checked by dependency-cruiser (`npm run lint` runs it: `npm test`
// and CI do). Each folder of src/ imports only itself and the folders below it in LAYERS; inside
// src/engine, each room imports only itself and the rooms above it in ROOMS (service/, the last, composes
// them all). Type-only imports count: a layer that names a type
// of a layer above it depends on it all the same. Change these lists and docs/architecture.md together.

/** src/ folders, top to bottom (docs/architecture.md, "Layers"). */
const LAYERS = [
  "cli",
  "acp",
  "mcp",
  "api",
  "ui",
  "mock-model",
  "cluster",
  "engine",
  "policy",
  "agents",
  "workspace",
  "sandbox",
  "chat",
  "config",
  "protocol",
  "support",
];

/** src/engine rooms, in the order of docs/architecture.md ("The engine's rooms"). */
const ROOMS = ["store", "questions", "conductor", "lifecycle", "follow", "race", "service"];

const alternatives = (names) => names.map((name) => name.replace(/[.-]/g, "\\$&")).join("|");

const layerRules = LAYERS.map((layer, index) => {
  const below = LAYERS.slice(index + 1);
  return {
    name: `layer-${layer}`,
    severity: "error",
    comment: `src/${layer}/ may import only ${
      below.length > 0 ? `itself and the layers below it: ${below.join(", ")}` : "itself"
    } (docs/architecture.md)`,
    from: { path: `^src/${layer}/` },
    to: { path: "^src/", pathNot: `^src/(${alternatives([layer, ...below])})/` },
  };
});

const roomRules = ROOMS.map((room, index) => {
  const above = ROOMS.slice(0, index);
  return {
    name: `engine-room-${room}`,
    severity: "error",
    comment: `src/engine/${room}/ may import only ${
      above.length > 0 ? `itself and the rooms above it: ${above.join(", ")}` : "itself"
    } (docs/architecture.md, "The engine's rooms")`,
    from: { path: `^src/engine/${room}/` },
    to: { path: "^src/engine/", pathNot: `^src/engine/(${alternatives([room, ...above])})/` },
  };
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    ...roomRules,
    {
      // An import the cruiser cannot resolve is an import no rule above can see: fail instead.
      name: "resolvable",
      severity: "error",
      comment: "every import in src/ must resolve (else the layer rules could not check it)",
      from: { path: "^src/" },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    // Packages resolved through their `exports`, as Node and TypeScript resolve them.
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "types", "default"],
    },
  },
};
