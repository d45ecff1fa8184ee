// The caesar dashboard: hash routes (#/ and #/tasks/<id>), each view following the server live.
import { getJson } from "./api.js";
import { showTaskList } from "./task-list.js";
import { showTaskPage } from "./task-page.js";

const view = document.getElementById("view");
const live = document.querySelector("[data-testid=live]");
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

window.addEventListener("hashchange", route);
route();
getJson("/api/agent/v1")
  .then((capabilities) => {
    document.querySelector("[data-testid=workspace]").textContent = capabilities.repositories.project;
  })
  .catch(() => undefined);
