import { existsSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { messages, startEditor } from "../helpers/acp-editor.js";
import { makeAcpProject, PIXEL, reportMessage } from "../helpers/acp-fixture.js";
import { FIXTURE_BIN } from "../helpers/repo.js";

const REPORT = reportMessage("Seen.");
const PLAIN = `[[agent]]\nid = "plain"\nbin = ${JSON.stringify(join(FIXTURE_BIN, "conformant.sh"))}\n`;

async function open(editor: ReturnType<typeof startEditor>, cwd: string) {
  const init = await editor.initialize();
  const { sessionId } = await editor.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  const prompt = (blocks: acp.ContentBlock[]) =>
    editor.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: blocks });
  return { init, prompt };
}

const withImage = (mimeType = "image/png", data = PIXEL): acp.ContentBlock[] => [
  { type: "text", text: "what is in this picture?" },
  { type: "image", mimeType, data },
];

describe("caesar acp: image prompts, where the delegate takes them", () => {
  it("a delegate that takes images: advertised, and the image reaches it in its prompt", async () => {
    const project = makeAcpProject([{ message: REPORT }]);
    const editor = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    try {
      const { init, prompt } = await open(editor, project.root);
      expect(init.agentCapabilities?.promptCapabilities?.image).toBe(true);
      await prompt(withImage());
      const sent = project.received().find((entry) => entry.event === "session/prompt") as
        | { images: { mimeType: string; data: string }[] }
        | undefined;
      expect(sent?.images).toEqual([{ mimeType: "image/png", data: PIXEL }]);
    } finally {
      editor.close();
    }
  });

  it("an ACP delegate whose initialize refuses images: the task runs from the text, with a finding", async () => {
    const project = makeAcpProject([{ message: REPORT }]);
    const editor = startEditor({
      cwd: project.root,
      args: ["--agent", "fixture-acp"],
      env: { ACP_FIXTURE_NO_IMAGES: "1" },
    });
    try {
      const { prompt } = await open(editor, project.root);
      await prompt(withImage());
      const sent = project.received().find((entry) => entry.event === "session/prompt") as
        | { images: unknown[] }
        | undefined;
      expect(sent?.images).toEqual([]);
      expect(messages(editor.record)).toMatch(/1 image\(s\) not passed on to the agent/);
    } finally {
      editor.close();
    }
  });

  it("a delegate that cannot take images: not advertised, and a prompt with one refused, saying why", async () => {
    const project = makeAcpProject([], PLAIN);
    const editor = startEditor({ cwd: project.root, args: ["--agent", "plain"] });
    try {
      const { init, prompt } = await open(editor, project.root);
      expect(init.agentCapabilities?.promptCapabilities?.image).toBe(false);
      const result = await prompt(withImage());
      expect(result.stopReason).toBe("end_turn");
      expect(messages(editor.record)).toMatch(
        /caesar refused the task: Agent "plain" does not take images in its prompt\..*Send the prompt without the image/s,
      );
      expect(existsSync(join(project.root, ".caesar", "tasks"))).toBe(false);
    } finally {
      editor.close();
    }
  });

  it("no fixed delegate: images not advertised; an image that is not one is refused", async () => {
    const project = makeAcpProject([{ message: REPORT }]);
    const editor = startEditor({ cwd: project.root });
    try {
      const { init } = await open(editor, project.root);
      expect(init.agentCapabilities?.promptCapabilities?.image).toBe(false);
    } finally {
      editor.close();
    }
    const fixed = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    try {
      const { prompt } = await open(fixed, project.root);
      await prompt(withImage("application/x-sh", "ZWNobyBoaQ=="));
      expect(messages(fixed.record)).toMatch(/caesar refused the task: .*the prompt's image 1/s);
      expect(project.received().some((entry) => entry.event === "session/prompt")).toBe(false);
    } finally {
      fixed.close();
    }
  });
});
