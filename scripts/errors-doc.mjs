#!/usr/bin/env node
// Generate docs/errors.md from the error catalogue, src/support/error-catalogue.ts: one table per area,
// each code with its exit status, its HTTP status and its doc comment.
//
//   node scripts/errors-doc.mjs            write docs/errors.md
//   node scripts/errors-doc.mjs --check    exit 1 when docs/errors.md is not what this would write
//   --doc <file>                           another file than docs/errors.md (the test's)
//
// It reads the catalogue's syntax with TypeScript's parser (a dev dependency), not its value: the entries
// are literals, and the doc comments exist only in the source. Anything else there is an error, said so.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const CATALOGUE = fileURLToPath(new URL("../src/support/error-catalogue.ts", import.meta.url));
const DOC = fileURLToPath(new URL("../docs/errors.md", import.meta.url));

/** The catalogue as data: its areas, and its entries with their doc comments, in source order. */
export function readCatalogue(text = readFileSync(CATALOGUE, "utf8")) {
  const source = ts.createSourceFile(CATALOGUE, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const objects = new Map();
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      let init = declaration.initializer;
      while (init && (ts.isAsExpression(init) || ts.isSatisfiesExpression(init))) init = init.expression;
      if (init && ts.isObjectLiteralExpression(init)) objects.set(declaration.name.getText(source), init);
    }
  }
  const areasNode = objects.get("ERROR_AREAS");
  const errorsNode = objects.get("ERRORS");
  if (!areasNode || !errorsNode) throw new Error(`${CATALOGUE}: no ERROR_AREAS or ERRORS object.`);
  const areas = literal(areasNode, source);
  const errors = errorsNode.properties.map((property) => {
    const where = `${CATALOGUE}:${source.getLineAndCharacterOfPosition(property.getStart(source)).line + 1}`;
    if (!ts.isPropertyAssignment(property)) throw new Error(`${where}: an entry is \`code: { … }\`.`);
    const code = property.name.getText(source);
    const docs = ts.getJSDocCommentsAndTags(property).filter(ts.isJSDoc);
    const doc =
      docs.length === 1 ? ts.getTextOfJSDocComment(docs[0].comment)?.replace(/\s+/g, " ").trim() : "";
    if (!doc || docs[0].tags?.length)
      throw new Error(`${where}: ${code} needs one doc comment, without tags.`);
    const entry = literal(property.initializer, source);
    if (!Object.hasOwn(areas, entry.area)) throw new Error(`${where}: ${code} has no area of ERROR_AREAS.`);
    return { code, doc, ...entry };
  });
  return { areas, errors };
}

/** The value of an object literal of strings, numbers and null (nothing computed). */
function literal(node, source) {
  if (ts.isStringLiteralLike(node)) return node.text;
  if (ts.isNumericLiteral(node)) return Number(node.text);
  if (node.kind === ts.SyntaxKind.NullKeyword) return null;
  if (ts.isObjectLiteralExpression(node)) {
    const value = {};
    for (const property of node.properties) {
      if (!ts.isPropertyAssignment(property)) break;
      value[property.name.getText(source)] = literal(property.initializer, source);
    }
    if (Object.keys(value).length === node.properties.length) return value;
  }
  const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
  throw new Error(`${CATALOGUE}:${line + 1}: not a literal: ${node.getText(source).slice(0, 80)}`);
}

/** docs/errors.md, as the catalogue says. */
export function renderErrorsDoc(catalogue = readCatalogue()) {
  const { areas, errors } = catalogue;
  const lines = [
    "# Error codes",
    "",
    "<!-- Generated from src/support/error-catalogue.ts by `npm run docs:errors`. Edit the catalogue, not this file. -->",
    "",
    "Every error caesar reports carries a stable `code`, a `summary` that says what happened and a `detail`",
    'that says what to do: `{"error": {"code", "summary", "detail"}}` in the `--json` output of every',
    "command, an MCP tool's error, the HTTP API's error body, and `data` of an ACP error. A task that ended",
    "in failure carries one as `error.code` in its state and in its last `error` event. The codes are a",
    "closed set, all listed here; the summary and detail are words for people and may change.",
    "",
    "- **exit**: the exit status of the command that fails with it — 1 a failure or a refusal, 2 a usage or",
    "  configuration problem. `caesar run` exits 1 for every code that ends a task. —: no command fails",
    "  with it.",
    "- **HTTP**: the status the HTTP API ([api.md](api.md)) answers with when the error reaches it (most",
    "  are the command line's alone). —: never an HTTP error; it is in a task's state or events, which the",
    "  API serves with 200.",
    "",
    ...Object.entries(areas).map(([, area]) => `- [${area.title}](#${anchor(area.title)})`),
  ];
  const dash = (value) => (value === null ? "—" : String(value));
  for (const [name, area] of Object.entries(areas)) {
    const rows = errors
      .filter((entry) => entry.area === name)
      .sort((a, b) => a.code.localeCompare(b.code))
      .map((entry) => [
        `\`${entry.code}\``,
        dash(entry.exit),
        dash(entry.http),
        (entry.governance ? `${entry.doc} _(${entry.governance})_` : entry.doc).replaceAll("|", "\\|"),
      ]);
    if (rows.length === 0) throw new Error(`${CATALOGUE}: the area ${name} has no codes.`);
    lines.push(
      "",
      `## ${area.title}`,
      "",
      area.about,
      "",
      ...table(["code", "exit", "HTTP", "meaning"], rows),
    );
  }
  return `${lines.join("\n")}\n`;
}

/** A Markdown table, its columns padded to their widest cell. */
function table(header, rows) {
  const widths = header.map((_, column) =>
    Math.max(3, ...[header, ...rows].map((row) => row[column].length)),
  );
  const line = (cells) => `| ${cells.map((cell, column) => cell.padEnd(widths[column])).join(" | ")} |`;
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...rows.map(line)];
}

/** GitHub's anchor of a heading. */
function anchor(title) {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, "")
    .replace(/ /g, "-");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf("--doc");
  const doc = at >= 0 ? args[at + 1] : DOC;
  const wanted = renderErrorsDoc();
  if (args.includes("--check")) {
    const present = (() => {
      try {
        return readFileSync(doc, "utf8");
      } catch {
        return "";
      }
    })();
    if (present !== wanted) {
      process.stderr.write(
        `${doc} is not what src/support/error-catalogue.ts says: run \`npm run docs:errors\` and commit it.\n`,
      );
      process.exit(1);
    }
  } else {
    writeFileSync(doc, wanted);
  }
}
