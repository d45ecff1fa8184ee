import { Argument, type Command, Option } from "commander";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";

const KINDS = ["task", "report", "event", "question", "answer"];

export const protocolCommand: CommandDefinition = {
  name: "protocol",
  group: "integrate",
  define(program: Command) {
    const protocol = program
      .command("protocol")
      .description("OACP documents: print their JSON Schemas, validate files")
      .helpCommand(false);

    withCommonOptions(
      protocol
        .command("schema")
        .description(
          "print the JSON Schema (draft 2020-12) of a document, generated from caesar's own schemas",
        )
        .addArgument(new Argument("<kind>", "task | report | event | question | answer").choices(KINDS))
        .addOption(
          new Option(
            "--strict",
            "variant for native structured outputs: every property required, no extra properties, nullable instead of optional",
          ),
        ),
    ).action(
      handle(async (ctx, kind) => {
        const { jsonSchemaFor } = await import("../../protocol/json-schema.js");
        const schema = jsonSchemaFor(kind as "task", { strict: ctx.options.strict === true });
        ctx.out.write(`${JSON.stringify(schema, null, 2)}\n`);
      }),
    );

    withCommonOptions(
      protocol
        .command("validate")
        .description(
          "validate a task, report, question, answer or events.jsonl file (kind detected from `protocol`); exit 0 valid, 1 invalid",
        )
        .argument("<file>", "the file to check"),
    ).action(
      handle(async (ctx, file) => {
        const { validateFile, renderValidation } = await import("../../protocol/validate-file.js");
        const result = await validateFile(String(file));
        ctx.out.result(result, () => renderValidation(result));
        return result.valid ? 0 : 1;
      }),
    );
    return protocol;
  },
};
