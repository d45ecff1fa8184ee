// @ts-check
// Syntax colouring without innerHTML: highlight.js (bundled at /vendor/highlight.js) returns escaped HTML,
// which is parsed in an inert document and copied as text nodes inside <span>s whose only attribute is a
// whitelisted hljs class. Nothing of the code can become markup or run.

/** @typedef {[className: string, text: string]} Token */

/**
 * What /vendor/highlight.js exports: it is dist/web/highlight.js, bundled from scripts/highlight-entry.mjs.
 * @typedef {typeof import("../scripts/highlight-entry.mjs")} Highlighter
 */
const HIGHLIGHTER = "/vendor/highlight.js";

/** @type {Promise<Highlighter | null> | undefined} */
let highlighter;

async function load() {
  highlighter ??= /** @type {Promise<Highlighter>} */ (import(HIGHLIGHTER)).catch(() => null);
  return highlighter;
}

const CLASS = /^(hljs-[a-z_-]+|language_|function_|class_|inherited__)$/;

/**
 * Highlight the lines of one block of code. Returns, per line, a list of [className, text] tokens
 * (className "" for plain text), or null when the language is unknown or the highlighter is unavailable.
 * @param {string[]} lines
 * @param {string} path
 * @returns {Promise<Token[][] | null>}
 */
export async function highlightLines(lines, path) {
  const hljs = await load();
  const language = hljs?.languageOf(path);
  if (!hljs || !language || lines.length === 0) return null;
  let html;
  try {
    html = hljs.highlightBlock(lines.join("\n"), language);
  } catch {
    return null;
  }
  // A <div>, not a <pre>: the HTML parser drops a newline right after <pre>, which would shift the lines.
  const doc = new DOMParser().parseFromString(`<div>${html}</div>`, "text/html");
  /** @type {Token[]} */
  let line = [];
  const out = [line];
  /**
   * @param {Node} node
   * @param {string[]} classes
   */
  const walk = (node, classes) => {
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) {
        const parts = /** @type {Text} */ (child).data.split("\n");
        parts.forEach((part, i) => {
          if (i > 0) {
            line = [];
            out.push(line);
          }
          if (part !== "") line.push([classes.join(" "), part]);
        });
      } else if (child.nodeType === Node.ELEMENT_NODE) {
        const element = /** @type {Element} */ (child);
        const own =
          element.tagName === "SPAN" ? [...element.classList].filter((name) => CLASS.test(name)) : [];
        walk(element, [...classes, ...own]);
      }
    }
  };
  walk(doc.body.firstChild ?? doc.body, []);
  return out.length === lines.length ? out : null;
}

/**
 * Tokens → nodes (text only).
 * @param {Token[]} tokens
 * @returns {Node[]}
 */
export function renderTokens(tokens) {
  return tokens.map(([className, text]) => {
    if (!className) return document.createTextNode(text);
    const span = document.createElement("span");
    span.className = className;
    span.textContent = text;
    return span;
  });
}
