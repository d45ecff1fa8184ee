import type { TaskIndex } from "./index/task-index.js";
import type { StreamRegistry } from "./routes/stream-registry.js";
import type { AccessPolicy } from "./security/access.js";
import type { LoginSessions } from "./security/sessions.js";
import type { ChangeReader } from "./views/change-view.js";
import type { RepositoryCatalog } from "./views/repository-view.js";

/** Everything the routes share: the index, the readers built on it, the access policy and the logins. */
export interface ApiContext {
  root: string;
  /** caesar's version, for the capabilities documents. */
  version: string;
  index: TaskIndex;
  repositories: RepositoryCatalog;
  changes: ChangeReader;
  access: AccessPolicy;
  sessions: LoginSessions;
  streams: StreamRegistry;
}
