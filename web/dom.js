// Building the page without ever parsing text as HTML: every string (agent output above all) becomes a text
// node. `h` is the only way views create elements.

/**
 * h("div", { class: "x", dataset: { id: "1" }, onclick: fn }, "text", child, [more])
 * Attributes are set one by one (only names we write ourselves); children that are strings become text.
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "dataset") Object.assign(element.dataset, value);
    else if (name.startsWith("on") && typeof value === "function")
      element.addEventListener(name.slice(2), value);
    else if (name === "value") element.value = value;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Replace everything inside `parent`. */
export function replace(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

/** A route link to one of our own hash routes (ids are validated by the server; encoded anyway). */
export function taskHref(id) {
  return `#/tasks/${encodeURIComponent(id)}`;
}
