import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

/** A string in a place where caesar puts an error code, and where it is. */
export interface CodeUse {
  code: string;
  file: string;
  line: number;
  /** Which kind of place: `code: "…"`, `x.code === "…"`, an argument for a parameter named `code`… */
  how: string;
}

/**
 * Every string literal in `files` standing where an error code stands. It reads syntax only (a type
 * checker would cost a whole program's check), which is why it looks for shapes:
 *
 * - `code: "…"` in an object (an error body, an `error` event, a task's `error`, a refusal record) — and
 *   `code: "a" | "b"` in a type;
 * - `….code === "…"` (or `!==`), `switch (….code) { case "…": }`;
 * - `SET.has(….code)` / `LIST.includes(….code)` where SET is a `new Set([…])` or array of literals of the
 *   same file;
 * - an argument given to a parameter named `code` of any function, method or constructor declared in
 *   `files` (found by name: `failure(…, "agent_failed")`, `errorEvent(message, "mcp_failed")`,
 *   `new CaesarError("…", …)`);
 * - a type alias named `…Code` that is a union of string literals.
 *
 * A value held in a variable is not followed; the types (`ErrorCode`) cover those.
 */
export function scanErrorCodes(files: ReadonlyMap<string, string>): CodeUse[] {
  const sources = [...files].map(([name, text]) =>
    ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS),
  );
  const codeParameters = parametersNamedCode(sources);
  const uses: CodeUse[] = [];
  for (const source of sources) {
    const literalSets = literalCollections(source);
    const add = (node: ts.Node, how: string) => {
      for (const literal of resultLiterals(node)) {
        const { line } = source.getLineAndCharacterOfPosition(literal.getStart(source));
        uses.push({ code: literal.text, file: source.fileName, line: line + 1, how });
      }
    };
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyAssignment(node) && nameOf(node.name) === "code") add(node.initializer, "code: …");
      else if ((ts.isPropertySignature(node) || ts.isParameter(node)) && nameOf(node.name) === "code") {
        if (node.type) for (const literal of literalTypes(node.type)) add(literal, "code: type");
      } else if (ts.isTypeAliasDeclaration(node) && node.name.text.endsWith("Code")) {
        for (const literal of literalTypes(node.type)) add(literal, `type ${node.name.text}`);
      } else if (ts.isBinaryExpression(node) && isEquality(node.operatorToken.kind)) {
        if (isCodeAccess(node.left)) add(node.right, ".code ===");
        if (isCodeAccess(node.right)) add(node.left, ".code ===");
      } else if (ts.isSwitchStatement(node) && isCodeAccess(node.expression)) {
        for (const clause of node.caseBlock.clauses)
          if (ts.isCaseClause(clause)) add(clause.expression, "case");
      } else if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        ["has", "includes"].includes(node.expression.name.text) &&
        node.arguments.length === 1 &&
        isCodeAccess(node.arguments[0]!) &&
        ts.isIdentifier(node.expression.expression)
      ) {
        const collection = literalSets.get(node.expression.expression.text);
        for (const element of collection ?? [])
          add(element, `${node.expression.expression.text}.has(….code)`);
      }
      if (ts.isVariableDeclaration(node) && nameOf(node.name) === "code" && node.initializer)
        add(node.initializer, "const code = …");
      if ((ts.isCallExpression(node) || ts.isNewExpression(node)) && node.arguments) {
        for (const index of codeArguments(node, codeParameters, source.fileName)) {
          const argument = node.arguments[index];
          if (argument) add(argument, `${node.expression.getText(source).split(".").pop()}(code)`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return uses;
}

/** The `.ts` files under `dir`, by path relative to `base`, with their text. */
export function readSources(dir: string, base: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts")) files.set(relative(base, path), readFileSync(path, "utf8"));
    }
  };
  walk(dir);
  return files;
}

/** Where each function, method and class (its constructor) has a parameter named `code`. */
interface CodeParameters {
  /** Functions by file, then by name (a call by plain name is to the one of its own file, if any). */
  functions: Map<string, Map<string, number>>;
  /** Functions by name, over all files (an imported function). */
  anyFunction: Map<string, number[]>;
  methods: Map<string, number[]>;
  classes: Map<string, number[]>;
}

function parametersNamedCode(sources: readonly ts.SourceFile[]): CodeParameters {
  const found: CodeParameters = {
    functions: new Map(),
    anyFunction: new Map(),
    methods: new Map(),
    classes: new Map(),
  };
  const add = (map: Map<string, number[]>, name: string, index: number) => {
    const indexes = map.get(name) ?? [];
    if (!indexes.includes(index)) indexes.push(index);
    map.set(name, indexes);
  };
  for (const source of sources) {
    const local = new Map<string, number>();
    found.functions.set(source.fileName, local);
    const note = (
      kind: "function" | "method" | "class",
      name: string | undefined,
      parameters: ts.NodeArray<ts.ParameterDeclaration>,
    ) => {
      const index = parameters.findIndex((parameter) => nameOf(parameter.name) === "code");
      if (name === undefined || index < 0) return;
      if (kind === "method") add(found.methods, name, index);
      else if (kind === "class") add(found.classes, name, index);
      else {
        local.set(name, index);
        add(found.anyFunction, name, index);
      }
    };
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionDeclaration(node)) note("function", nameOf(node.name), node.parameters);
      else if (ts.isMethodDeclaration(node)) note("method", nameOf(node.name), node.parameters);
      else if (ts.isClassDeclaration(node) && node.name) {
        const ctor = node.members.find(ts.isConstructorDeclaration);
        if (ctor) note("class", node.name.text, ctor.parameters);
      } else if (
        ts.isVariableDeclaration(node) &&
        node.initializer &&
        (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer))
      ) {
        note("function", nameOf(node.name), node.initializer.parameters);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** The positions of the arguments a call gives to a parameter named `code`. */
function codeArguments(
  call: ts.CallExpression | ts.NewExpression,
  found: CodeParameters,
  file: string,
): number[] {
  const callee = call.expression;
  if (ts.isNewExpression(call)) return ts.isIdentifier(callee) ? (found.classes.get(callee.text) ?? []) : [];
  if (ts.isIdentifier(callee)) {
    const local = found.functions.get(file)?.get(callee.text);
    return local !== undefined ? [local] : (found.anyFunction.get(callee.text) ?? []);
  }
  if (ts.isPropertyAccessExpression(callee)) return found.methods.get(callee.name.text) ?? [];
  return [];
}

/** `const NAME = new Set([…])` or `const NAME = […]` of string literals, by name. */
function literalCollections(source: ts.SourceFile): Map<string, ts.Expression[]> {
  const found = new Map<string, ts.Expression[]>();
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      let init: ts.Expression = node.initializer;
      while (ts.isAsExpression(init) || ts.isSatisfiesExpression(init)) init = init.expression;
      if (ts.isNewExpression(init) && init.arguments?.[0]) init = init.arguments[0];
      while (ts.isAsExpression(init) || ts.isSatisfiesExpression(init)) init = init.expression;
      if (ts.isArrayLiteralExpression(init)) found.set(node.name.text, [...init.elements]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The string literals an expression can evaluate to, as far as its shape tells. */
function resultLiterals(node: ts.Node): ts.StringLiteralLike[] {
  if (ts.isStringLiteralLike(node)) return [node];
  if (ts.isLiteralTypeNode(node)) return resultLiterals(node.literal);
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node))
    return resultLiterals(node.expression);
  if (ts.isConditionalExpression(node))
    return [...resultLiterals(node.whenTrue), ...resultLiterals(node.whenFalse)];
  if (
    ts.isBinaryExpression(node) &&
    [ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken].includes(node.operatorToken.kind)
  )
    return [...resultLiterals(node.left), ...resultLiterals(node.right)];
  return [];
}

function literalTypes(node: ts.TypeNode): ts.Node[] {
  if (ts.isUnionTypeNode(node)) return node.types.flatMap(literalTypes);
  if (ts.isParenthesizedTypeNode(node)) return literalTypes(node.type);
  if (ts.isLiteralTypeNode(node) && ts.isStringLiteral(node.literal)) return [node];
  return [];
}

function isEquality(kind: ts.SyntaxKind): boolean {
  return [
    ts.SyntaxKind.EqualsEqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsEqualsToken,
    ts.SyntaxKind.EqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsToken,
  ].includes(kind);
}

function isCodeAccess(node: ts.Node): boolean {
  while (ts.isParenthesizedExpression(node) || ts.isNonNullExpression(node)) node = node.expression;
  return ts.isPropertyAccessExpression(node) && node.name.text === "code";
}

function nameOf(name: ts.Node | undefined): string | undefined {
  if (name && (ts.isIdentifier(name) || ts.isStringLiteral(name))) return name.text;
  return undefined;
}
