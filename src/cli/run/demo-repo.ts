import { makeThrowawayRepository } from "./throwaway-repo.js";

export const DEMO_OBJECTIVE =
  'replace "Hello " with "Hello, " in greet.js; create CHANGELOG.md containing "- greet: add the missing comma"';

/** A throwaway git repository with one small file and one commit, for `caesar demo`. */
export function makeDemoRepository(): string {
  return makeThrowawayRepository(
    "caesar-demo-",
    {
      "greet.js": 'export function greet(name) {\n  return "Hello " + name + "!";\n}\n',
      "README.md": "# demo\n\nA throwaway repository made by `caesar demo`.\n",
    },
    "demo: initial commit",
  );
}
