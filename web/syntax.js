// Syntax colouring without innerHTML: highlight.js (bundled at /vendor/highlight.js) returns escaped HTML,
// which is parsed in an inert document and copied as text nodes inside <span>s whose only attribute is a
// whitelisted hljs class. Nothing of the code can become markup or run.

let highlighter;

async function load() {
  highlighter ??= import("/vendor/highlight.js").catch(() => null);
  return highlighter;
}

const CLASS = /^(hljs-[a-z_-]+|language_|function_|class_|inherited__)$/;

/**
 * Highlight the lines of one block of code. Returns, per line, a list of [className, text] tokens
 * (className "" for plain text), or null when the language is unknown or the highlighter is unavailable.
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
  const out = [[]];
  const walk = (node, classes) => {
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) {
        const parts = child.data.split("\n");
        parts.forEach((part, i) => {
          if (i > 0) out.push([]);
          if (part !== "") out.at(-1).push([classes.join(" "), part]);
        });
      } else if (child.nodeType === Node.ELEMENT_NODE) {
        const own = child.tagName === "SPAN" ? [...child.classList].filter((name) => CLASS.test(name)) : [];
        walk(child, [...classes, ...own]);
      }
    }
  };
  walk(doc.body.firstChild ?? doc.body, []);
  return out.length === lines.length ? out : null;
}

/** Tokens → nodes (text only). */
export function renderTokens(tokens) {
  return tokens.map(([className, text]) => {
    if (!className) return document.createTextNode(text);
    const span = document.createElement("span");
    span.className = className;
    span.textContent = text;
    return span;
  });
}
