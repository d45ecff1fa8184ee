// @ts-check
// Building the page without ever parsing text as HTML: every string (agent output above all) becomes a text
// node. `h` is the only way views create elements.

/**
 * What `h` and `append` take as children: nodes, text (numbers too), nothing (null, undefined, false), or
 * lists of those.
 * @typedef {Node | string | number | null | undefined | false | ChildList} Child
 */
/** @typedef {Child[]} ChildList */
/**
 * Attributes by name (only names we write ourselves): `dataset` sets data-*, `on<event>` adds a
 * listener, `value` sets the property; null, undefined and false leave the attribute out, true sets it.
 * @typedef {{ [name: string]: string | number | boolean | null | undefined | { [key: string]: string } | ((event: Event) => unknown) }} Attributes
 */

/**
 * h("div", { class: "x", dataset: { id: "1" }, onclick: fn }, "text", child, [more])
 * Attributes are set one by one (only names we write ourselves); children that are strings become text.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attributes} [attributes]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "dataset" && typeof value === "object") Object.assign(element.dataset, value);
    else if (name.startsWith("on") && typeof value === "function")
      element.addEventListener(name.slice(2), value);
    else if (name === "value") /** @type {HTMLInputElement} */ (element).value = String(value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

/**
 * @template {Node & ParentNode} P
 * @param {P} parent
 * @param {Child[]} children
 * @returns {P}
 */
export function append(parent, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/**
 * Replace everything inside `parent`.
 * @template {Node & ParentNode} P
 * @param {P} parent
 * @param {...Child} children
 * @returns {P}
 */
export function replace(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

/**
 * A route link to one of our own hash routes (ids are validated by the server; encoded anyway).
 * @param {string} id
 */
export function taskHref(id) {
  return `#/tasks/${encodeURIComponent(id)}`;
}

/**
 * The element of index.html that `selector` names; a page without it is a broken page, said at once.
 * @param {string} selector
 * @returns {HTMLElement}
 */
export function pageElement(selector) {
  const element = document.querySelector(selector);
  if (!(element instanceof HTMLElement)) throw new Error(`index.html has no ${selector}`);
  return element;
}
