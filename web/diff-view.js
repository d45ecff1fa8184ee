// @ts-check
// The verified diff (git's unified patch, as the server sends it) as tables with line numbers and syntax
// colouring. Parsed here line by line; every piece of it is rendered as text.
import { h } from "./dom.js";
import { highlightLines, renderTokens } from "./syntax.js";

/** @typedef {import("./syntax.js").Token} Token */
/**
 * One line of a hunk, with its numbers in the old and the new file (null on the side it is not in).
 * @typedef {{ kind: "add" | "del" | "ctx" | "note", text: string, oldNo: number | null, newNo: number | null }} PatchLine
 */
/** @typedef {{ header: string, lines: PatchLine[] }} Hunk */
/**
 * @typedef {{ header: string, path: string, status: "modified" | "added" | "deleted", binary: boolean, hunks: Hunk[] }} PatchFile
 */

/**
 * Split a `git diff` patch into files and hunks.
 * @param {string} patch
 * @returns {PatchFile[]}
 */
export function parsePatch(patch) {
  /** @type {PatchFile[]} */
  const files = [];
  /** @type {PatchFile | undefined} */
  let file;
  /** @type {Hunk | undefined} */
  let hunk;
  let oldNo = 0;
  let newNo = 0;
  for (const line of patch.split("\n")) {
    if (line.startsWith("diff --git ")) {
      file = { header: line, path: pathFromHeader(line), status: "modified", binary: false, hunks: [] };
      files.push(file);
      hunk = undefined;
      continue;
    }
    if (!file) continue;
    if (!hunk) {
      if (line.startsWith("new file mode")) file.status = "added";
      else if (line.startsWith("deleted file mode")) file.status = "deleted";
      else if (line.startsWith("GIT binary patch") || line.startsWith("Binary files")) file.binary = true;
      else if (line.startsWith("+++ ") && line !== "+++ /dev/null") file.path = stripPrefix(line.slice(4));
      else if (line.startsWith("--- ") && file.status === "deleted") file.path = stripPrefix(line.slice(4));
    }
    const header = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$/.exec(line);
    if (header && !file.binary) {
      hunk = { header: line, lines: [] };
      file.hunks.push(hunk);
      oldNo = Number(header[1]);
      newNo = Number(header[2]);
      continue;
    }
    if (!hunk || file.binary) continue;
    const sign = line[0];
    const text = line.slice(1);
    if (sign === "+") hunk.lines.push({ kind: "add", text, oldNo: null, newNo: newNo++ });
    else if (sign === "-") hunk.lines.push({ kind: "del", text, oldNo: oldNo++, newNo: null });
    else if (sign === " ") hunk.lines.push({ kind: "ctx", text, oldNo: oldNo++, newNo: newNo++ });
    else if (sign === "\\") hunk.lines.push({ kind: "note", text: line, oldNo: null, newNo: null });
  }
  return files;
}

/** @param {string} line */
function pathFromHeader(line) {
  const match = /^diff --git a\/(.*) b\/(.*)$/.exec(line);
  return match?.[2] ?? line.slice("diff --git ".length);
}

/** @param {string} path */
function stripPrefix(path) {
  const unquoted = path.startsWith('"') && path.endsWith('"') ? path.slice(1, -1) : path;
  return unquoted.replace(/^[ab]\//, "");
}

/**
 * Render a patch: one section per file, its hunks as a table.
 * @param {string} patch
 * @returns {Promise<HTMLElement>}
 */
export async function renderPatch(patch) {
  const files = parsePatch(patch);
  if (files.length === 0) return h("p", { class: "muted" }, "No changes.");
  const sections = [];
  for (const file of files) sections.push(await renderFile(file));
  return h("div", { class: "diff", "data-testid": "diff" }, sections);
}

/** @param {PatchFile} file */
async function renderFile(file) {
  const rows = [];
  for (const hunk of file.hunks) {
    rows.push(h("tr", { class: "hunk" }, h("td", { colspan: "4" }, hunk.header)));
    const colours = await colourHunk(hunk, file.path);
    hunk.lines.forEach((line, i) => {
      const code = h("td", { class: "code" });
      if (colours[i]) code.append(...renderTokens(colours[i]));
      else code.textContent = line.text;
      rows.push(
        h(
          "tr",
          { class: `line ${line.kind}` },
          h("td", { class: "no" }, line.oldNo ?? ""),
          h("td", { class: "no" }, line.newNo ?? ""),
          h("td", { class: "sign" }, line.kind === "add" ? "+" : line.kind === "del" ? "-" : ""),
          code,
        ),
      );
    });
  }
  return h(
    "section",
    { class: "diff-file", dataset: { path: file.path } },
    h("h4", {}, h("span", { class: `action ${file.status}` }, file.status), " ", file.path),
    file.binary
      ? h("p", { class: "muted" }, "Binary file.")
      : h("table", { class: "diff-table" }, h("tbody", {}, rows)),
  );
}

/**
 * Colour both sides of a hunk as code (so strings and comments spanning lines are right), per line.
 * @param {Hunk} hunk
 * @param {string} path
 * @returns {Promise<(Token[] | null)[]>}
 */
async function colourHunk(hunk, path) {
  /** @type {[PatchLine, number][]} */
  const numbered = hunk.lines.map((line, i) => [line, i]);
  const newSide = numbered.filter(([line]) => line.kind === "ctx" || line.kind === "add");
  const oldSide = numbered.filter(([line]) => line.kind === "del");
  /** @type {(Token[] | null)[]} */
  const out = new Array(hunk.lines.length).fill(null);
  for (const side of [newSide, oldSide]) {
    const tokens = await highlightLines(
      side.map(([line]) => line.text),
      path,
    );
    if (!tokens) continue;
    side.forEach(([, i], k) => {
      out[i] = tokens[k] ?? null;
    });
  }
  return out;
}
