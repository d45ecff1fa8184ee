// @ts-check
// The caesar dashboard: hash routes (#/ and #/tasks/<id>), each view following the server live.
import { adoptLogin, getCapabilities, getSession } from "./api.js";
import { pageElement } from "./dom.js";
import { showTaskList } from "./task-list.js";
import { showTaskPage } from "./task-page.js";

/** @typedef {import("./api.js").StreamStatus} StreamStatus */

adoptLogin();

const view = pageElement("#view");
const live = pageElement("[data-testid=live]");
const auth = pageElement("[data-testid=auth]");
let stop = () => {};

/** @param {StreamStatus} state */
function setStatus(state) {
  live.dataset.state = state;
  live.textContent = state === "live" ? "● live" : state;
}

function route() {
  stop();
  setStatus("connecting");
  const id = /^#\/tasks\/([^/]+)$/.exec(location.hash)?.[1];
  stop = id ? showTaskPage(view, decodeURIComponent(id), setStatus) : showTaskList(view, setStatus);
  window.scrollTo(0, 0);
}

/** Say whether this page may act, and how to log in when it may not (reads need no login on loopback). */
async function showSession() {
  const session = await getSession().catch(() => null);
  auth.dataset.state = session?.authenticated ? "in" : "out";
  auth.textContent = session?.authenticated ? "logged in" : "read-only — log in: caesar serve login";
  auth.title = session?.login ?? "";
}

window.addEventListener("hashchange", route);
document.addEventListener("caesar:logged-out", () => void showSession());
route();
void showSession();
getCapabilities()
  .then((capabilities) => {
    pageElement("[data-testid=workspace]").textContent = capabilities.repositories.project;
  })
  .catch(() => undefined);
