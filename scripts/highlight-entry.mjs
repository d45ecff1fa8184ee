// @ts-check
// The dashboard's syntax highlighter: highlight.js core and the languages a diff most often shows, bundled
// for the browser by scripts/build.mjs into dist/web/highlight.js (the user never builds anything). The
// page turns its HTML output into DOM nodes through a whitelist (web/syntax.js), never innerHTML; its type
// check (web/tsconfig.json) reads this file's exports.
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import csharp from "highlight.js/lib/languages/csharp";
import css from "highlight.js/lib/languages/css";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import kotlin from "highlight.js/lib/languages/kotlin";
import markdown from "highlight.js/lib/languages/markdown";
import php from "highlight.js/lib/languages/php";
import python from "highlight.js/lib/languages/python";
import ruby from "highlight.js/lib/languages/ruby";
import rust from "highlight.js/lib/languages/rust";
import scss from "highlight.js/lib/languages/scss";
import sql from "highlight.js/lib/languages/sql";
import swift from "highlight.js/lib/languages/swift";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const LANGUAGES = {
  bash,
  c,
  cpp,
  csharp,
  css,
  go,
  ini,
  java,
  javascript,
  json,
  kotlin,
  markdown,
  php,
  python,
  ruby,
  rust,
  scss,
  sql,
  swift,
  typescript,
  xml,
  yaml,
};
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);

/** File extension → language. @type {Record<string, string>} */
const BY_EXTENSION = {
  sh: "bash",
  bash: "bash",
  zsh: "bash",
  c: "c",
  h: "c",
  cc: "cpp",
  cpp: "cpp",
  hpp: "cpp",
  cs: "csharp",
  css: "css",
  go: "go",
  toml: "ini",
  ini: "ini",
  cfg: "ini",
  java: "java",
  js: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  jsx: "javascript",
  json: "json",
  kt: "kotlin",
  kts: "kotlin",
  md: "markdown",
  markdown: "markdown",
  php: "php",
  py: "python",
  rb: "ruby",
  rs: "rust",
  scss: "scss",
  sql: "sql",
  swift: "swift",
  ts: "typescript",
  tsx: "typescript",
  mts: "typescript",
  cts: "typescript",
  html: "xml",
  htm: "xml",
  xml: "xml",
  svg: "xml",
  vue: "xml",
  yml: "yaml",
  yaml: "yaml",
};

/**
 * The language of a file path, or null when none fits.
 * @param {string} path
 * @returns {string | null}
 */
export function languageOf(path) {
  const name = path.split("/").pop() ?? "";
  if (name === "Dockerfile" || name === "Makefile") return null;
  const extension = name.includes(".") ? (name.split(".").pop() ?? "").toLowerCase() : "";
  // Own keys only: "x.constructor" names no language (the prototype's function is not one).
  return Object.hasOwn(BY_EXTENSION, extension) ? (BY_EXTENSION[extension] ?? null) : null;
}

/**
 * Highlight a block of code (lines joined by "\n") as `language`: highlight.js's escaped HTML.
 * @param {string} code
 * @param {string} language
 * @returns {string}
 */
export function highlightBlock(code, language) {
  return hljs.highlight(code, { language, ignoreIllegals: true }).value;
}
