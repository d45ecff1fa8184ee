import { mkdir, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import {
  parse as parseTomlDocument,
  patch as patchToml,
  stringify as stringifyToml,
} from "@decimalturn/toml-patch";
import { writeFileAtomic } from "../support/atomic-file.js";
import { errnoOf, UsageError } from "../support/errors.js";
import { type FileLayer, layerPaths } from "./effective.js";
import { parseConfigText } from "./load.js";

/** The layer a writing command targets: `--global`, `--local`, or the project by default. */
export function layerFromFlags(options: { global?: unknown; local?: unknown }): FileLayer {
  if (options.global && options.local) {
    throw new UsageError("conflicting_layers", "--global and --local cannot be used together.", {
      detail:
        "Pick one layer: --global (~/.config/caesar), --local (.caesar/config.local.toml), or neither (the project).",
    });
  }
  return options.global ? "global" : options.local ? "local" : "project";
}

export type TomlDocument = Record<string, unknown>;

export interface LayerEdit {
  path: string;
  layer: FileLayer;
  changed: boolean;
}

/**
 * Edit one layer's file as the user wrote it: read only that file, apply `mutate` to what it declares in
 * its own right (never the merged configuration), validate the result, and patch the text so comments,
 * order and formatting survive. Written atomically.
 */
export async function editLayer(
  root: string,
  layer: FileLayer,
  mutate: (document: TomlDocument) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<LayerEdit> {
  const path = layerPaths(root, env)[layer];
  let text = "";
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if (errnoOf(error) !== "ENOENT") throw error;
  }
  parseConfigText(text, path); // refuse to edit a file that is already invalid: say so first
  const document = (text.trim() === "" ? {} : parseTomlDocument(text)) as TomlDocument;
  const before = JSON.stringify(document);
  mutate(document);
  if (JSON.stringify(document) === before) return { path, layer, changed: false };
  const next = patchPreservingText(text, document);
  parseConfigText(next, path); // never write an invalid configuration
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, next.endsWith("\n") ? next : `${next}\n`, { shared: true });
  return { path, layer, changed: true };
}

/**
 * Patch the text with the new document. toml-patch cannot introduce an array of tables (`[[agent]]`)
 * that the text does not have yet: those are appended as new sections after the patch.
 */
function patchPreservingText(text: string, document: TomlDocument): string {
  const original = (text.trim() === "" ? {} : parseTomlDocument(text)) as TomlDocument;
  const appended: TomlDocument = {};
  const rest: TomlDocument = {};
  for (const [key, value] of Object.entries(document)) {
    const isTableArray =
      Array.isArray(value) &&
      value.length > 0 &&
      value.every((v) => v && typeof v === "object" && !Array.isArray(v));
    if (isTableArray && !(key in original)) appended[key] = value;
    else rest[key] = value;
  }
  let next = Object.keys(rest).length === 0 && text.trim() === "" ? "" : patchToml(text, rest as never);
  if (Object.keys(appended).length > 0) {
    const separator = next === "" ? "" : next.endsWith("\n\n") ? "" : next.endsWith("\n") ? "\n" : "\n\n";
    next = `${next}${separator}${stringifyToml(appended as never)}`;
  }
  return next;
}

/** The table at `key` of a document, created when absent. */
export function tableOf(document: TomlDocument, key: string): TomlDocument {
  const current = document[key];
  if (current && typeof current === "object" && !Array.isArray(current)) return current as TomlDocument;
  const created: TomlDocument = {};
  document[key] = created;
  return created;
}

/** The array of tables at `key` (`[[agent]]`, `[[role]]`), created when absent. */
export function arrayOf(document: TomlDocument, key: string): TomlDocument[] {
  const current = document[key];
  if (Array.isArray(current)) return current as TomlDocument[];
  const created: TomlDocument[] = [];
  document[key] = created;
  return created;
}
