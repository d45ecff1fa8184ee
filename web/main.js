// The caesar dashboard: hash routes (#/ and #/tasks/<id>), each view following the server live.
import { adoptLogin, getJson, getSession } from "./api.js";
import { showTaskList } from "./task-list.js";
import { showTaskPage } from "./task-page.js";

adoptLogin();

const view = document.getElementById("view");
const live = document.querySelector("[data-testid=live]");
const auth = document.querySelector("[data-testid=auth]");
let stop = () => {};

function setStatus(state) {
  live.dataset.state = state;
  live.textContent = state === "live" ? "● live" : state;
}

function route() {
  stop();
  setStatus("connecting");
  const match = /^#\/tasks\/([^/]+)$/.exec(location.hash);
  stop = match ? showTaskPage(view, decodeURIComponent(match[1]), setStatus) : showTaskList(view, setStatus);
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
getJson("/api/agent/v1")
  .then((capabilities) => {
    document.querySelector("[data-testid=workspace]").textContent = capabilities.repositories.project;
  })
  .catch(() => undefined);
