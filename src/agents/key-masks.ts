import { createHmac } from "node:crypto";
import type { Finding } from "../protocol/report.js";

/**
 * The provider keys a sandboxed agent CLI gets masked (docs/threat-model.md): in its environment a
 * placeholder, and its model's base URL pointed at a door of caesar's on its sandbox's loopback, which
 * sends each request on to the provider with the real key in place of the placeholder. The key never enters
 * the sandbox, so nothing the agent runs can read it or carry it elsewhere; it leaves the machine only to
 * the provider its task's environment names.
 *
 * Only where a CLI takes its provider's base URL from a variable and sends the key in a header: claude
 * (`ANTHROPIC_BASE_URL`), gemini (`GOOGLE_GEMINI_BASE_URL`), copilot with a provider of the person's own
 * (`COPILOT_PROVIDER_BASE_URL`). codex reads its base URL from its configuration file, opencode from a JSON
 * variable: their keys are not masked; nor are sign-ins kept in files (OAuth tokens).
 */
export interface KeyDoorSpec {
  /** The variable naming the provider's base URL, which the agent gets pointed at the door. */
  urlVariable: string;
  /** The provider's base URL the door sends requests to (the variable's value, or the provider's own). */
  upstream: string;
  /** The variables holding keys the door puts back (each set, non-empty, in the environment). */
  keys: string[];
}

interface Provider {
  urlVariable: string;
  /** The base URL when the variable is unset; none: the provider is used only when it is set. */
  defaultUrl?: string;
  keys: string[];
  /** Variables under which the CLI uses another provider (a cloud's), whose credentials are not these. */
  elsewhere: string[];
}

const PROVIDERS: Record<string, Provider> = {
  claude: {
    urlVariable: "ANTHROPIC_BASE_URL",
    defaultUrl: "https://api.anthropic.com",
    keys: ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"],
    elsewhere: ["CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"],
  },
  gemini: {
    urlVariable: "GOOGLE_GEMINI_BASE_URL",
    defaultUrl: "https://generativelanguage.googleapis.com",
    keys: ["GEMINI_API_KEY"],
    elsewhere: ["GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA"],
  },
  copilot: {
    urlVariable: "COPILOT_PROVIDER_BASE_URL",
    keys: ["COPILOT_PROVIDER_API_KEY"],
    elsewhere: [],
  },
};

/** The doors a sandboxed agent of `product` gets for its keys, from its environment (none: nothing to mask). */
export function keyDoorSpecs(product: string, env: NodeJS.ProcessEnv): KeyDoorSpec[] {
  const provider = PROVIDERS[product];
  if (!provider) return [];
  if (provider.elsewhere.some((name) => truthy(env[name]))) return [];
  const keys = provider.keys.filter((name) => (env[name] ?? "").trim() !== "");
  if (keys.length === 0) return [];
  const upstream = baseUrl(env[provider.urlVariable]?.trim() || provider.defaultUrl);
  if (!upstream) return [];
  return [{ urlVariable: provider.urlVariable, upstream, keys }];
}

/**
 * Why keys that masking would cover stay in the agent's environment as they are: its provider's base URL
 * variable is set to something the door cannot stand for (credentials, a query, another scheme). Undefined
 * when there is nothing to say.
 */
export function unmaskedKeys(
  product: string,
  env: NodeJS.ProcessEnv,
): { keys: string[]; why: string } | undefined {
  const provider = PROVIDERS[product];
  if (!provider || provider.elsewhere.some((name) => truthy(env[name]))) return undefined;
  const keys = provider.keys.filter((name) => (env[name] ?? "").trim() !== "");
  const url = env[provider.urlVariable]?.trim();
  if (keys.length === 0 || !url || baseUrl(url)) return undefined;
  return {
    keys,
    why: `${provider.urlVariable} is not a plain http(s) URL caesar can stand in for (it names credentials, a query or a fragment, or another scheme)`,
  };
}

/** The finding of a sandboxed task whose agent's keys masking would cover but cannot (see unmaskedKeys). */
export function unmaskedKeysFinding(product: string, env: NodeJS.ProcessEnv): Finding | undefined {
  const unmasked = unmaskedKeys(product, env);
  if (!unmasked) return undefined;
  return {
    severity: "medium",
    title: "The agent's provider key was not masked",
    detail: `${unmasked.keys.join(", ")} stayed in the agent's environment as it is, readable by what it runs: ${unmasked.why}. Point it at the provider (or a gateway) by a URL without them, and pass credentials in the key's variable.`,
  };
}

/**
 * The placeholder an agent gets for a key: derived from the key and its task, so that a conductor taking the
 * task over (after a crash, its agent still running) finds the same one; the key cannot be had back from it.
 */
export function keyPlaceholder(taskId: string, variable: string, key: string): string {
  const digest = createHmac("sha256", key).update(`caesar key mask\0${taskId}\0${variable}`).digest("hex");
  return `caesar-masked-${digest.slice(0, 40)}`;
}

/** An http(s) URL without credentials, query or fragment, without its trailing slash; else undefined. */
function baseUrl(text: string | undefined): string | undefined {
  if (!text) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  if (url.username || url.password || url.search || url.hash) return undefined;
  return url.href.replace(/\/+$/, "");
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== "" && !/^(0|false|no|off)$/i.test(value.trim());
}
