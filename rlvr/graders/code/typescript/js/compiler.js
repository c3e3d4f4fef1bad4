// The trusted TypeScript compiler process (never runs candidate code; it only parses, checks and
// transforms candidate *text*). Started once per grader and kept warm: the standard library's
// declaration files are parsed and bound once, then shared by every candidate's program.
//
// argv[2]: the directory holding the pinned `typescript` package. Requests and answers are one JSON
// document per line on stdin/stdout:
//   {"op": "check", "files": [{"text", "forbid_any"}]}
//     -> {"results": [{"diagnostics": [{"line", "column", "code", "message"}], "any": n, "casts": n}]}
//   {"op": "build", "counter": name, "files": [{"text"}]}
//     -> {"results": [{"js": text} | {"error": message}]}
// Candidates are checked together, CHUNK files per program (a program's set-up, merging the
// standard library's globals, costs ~45 ms: per-candidate programs would cost that each). Every file
// is forced to be a module, so its declarations are its own; a file that could reach the others'
// scope (`declare global`, `declare module "x"`) is checked alone. The options are fixed here, in the
// trusted process: a candidate cannot choose them (its comments, `/// <reference>` included, are
// blanked before it gets here).
"use strict";
const path = require("path");
const readline = require("readline");
const ts = require(path.join(process.argv[2], "typescript"));

const CHUNK = 100;
const OPTIONS = {
  strict: true,
  noImplicitReturns: true,
  noFallthroughCasesInSwitch: true,
  allowUnreachableCode: false,
  target: ts.ScriptTarget.ES2022,
  lib: ["lib.es2022.d.ts"],
  module: ts.ModuleKind.ES2022,
  moduleDetection: ts.ModuleDetectionKind.Force,
  types: [],
  noEmit: true,
  skipLibCheck: true,
  noResolve: true,
  allowJs: false,
};
const libCache = new Map();
const defaultHost = ts.createCompilerHost(OPTIONS, true);

function libSource(fileName, version) {
  let source = libCache.get(fileName);
  if (source === undefined) {
    const text = ts.sys.readFile(fileName);
    source = text === undefined ? null : ts.createSourceFile(fileName, text, version, true);
    libCache.set(fileName, source);
  }
  return source || undefined;
}

function reachesOthers(source) {
  let found = false;
  const visit = (node) => {
    if (found) return;
    if (ts.isModuleDeclaration(node) && (ts.isStringLiteral(node.name) || (node.flags & ts.NodeFlags.GlobalAugmentation))) {
      found = true;
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

// `any` as the checker sees it, not only the keyword: each `any` keyword, plus each declaration whose
// type is `any` though no `any` is written in it (`typeof` an untyped value, `JSON.parse`, an untyped
// import), plus each function whose return type is `any` that way. Parameters without an annotation
// are left out (strict mode already reports them). `casts`: type assertions out of `unknown` or `any`
// (`x as unknown as T`, `<T>(u as unknown)`) or into or out of `never` (`x as never as T`), which
// bypass the checker's comparability test.
function typeHoles(program, source) {
  const checker = program.getTypeChecker();
  let keywords = 0;
  let implicit = 0;
  let casts = 0;
  const writesAny = (node) => {
    let found = false;
    const visit = (child) => {
      if (found) return;
      if (child.kind === ts.SyntaxKind.AnyKeyword) found = true;
      else ts.forEachChild(child, visit);
    };
    if (node) visit(node);
    return found;
  };
  const isAny = (type) => type !== undefined && (type.flags & ts.TypeFlags.Any) !== 0;
  const loose = (type) =>
    type !== undefined && (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.Never)) !== 0;
  const visit = (node) => {
    if (node.kind === ts.SyntaxKind.AnyKeyword) keywords += 1;
    const declaration =
      ts.isVariableDeclaration(node) || ts.isPropertyDeclaration(node) || ts.isBindingElement(node) ||
      (ts.isParameter(node) && node.type !== undefined);
    if (declaration && !writesAny(node.type) && !writesAny(node.initializer)) {
      if (isAny(checker.getTypeAtLocation(node.name))) implicit += 1;
    }
    if (
      (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isFunctionExpression(node) ||
        ts.isArrowFunction(node)) && !writesAny(node.type) && node.body !== undefined
    ) {
      const signature = checker.getSignatureFromDeclaration(node);
      if (signature && isAny(checker.getReturnTypeOfSignature(signature))) implicit += 1;
    }
    if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && !ts.isConstTypeReference(node.type)) {
      const target = node.type.kind;
      if (target === ts.SyntaxKind.NeverKeyword) {
        casts += 1; // `x as never` is assignable to every type: `x as never as T` is `as unknown as T`
      } else if (target !== ts.SyntaxKind.UnknownKeyword && target !== ts.SyntaxKind.AnyKeyword) {
        if (loose(checker.getTypeAtLocation(node.expression))) casts += 1;
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { any: keywords + implicit, casts };
}

// At most `n` UTF-16 units, never ending in half a surrogate pair (a candidate's astral-plane name
// cut there would hand the trusted side a lone surrogate, text no UTF-8 writer accepts).
// Unpaired surrogates anywhere in it (a string literal type `"\uD800"`, written in plain ASCII by the
// candidate, is printed by the checker as the lone code unit itself) become U+FFFD.
function clip(text, n) {
  const cut = text.slice(0, n);
  const whole = /[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut;
  return whole.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
}

function diagnosticsOf(program, source) {
  return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((d) => {
    const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : null;
    return {
      line: where ? where.line + 1 : null,
      column: where ? where.character + 1 : null,
      code: d.code,
      message: clip(ts.flattenDiagnosticMessageText(d.messageText, " "), 300),
    };
  });
}

// Comments reach this process blanked; a suppression directive the compiler still finds (one the
// trusted side's parser did not see as a comment) is removed from the parsed file before checking, so
// it hides nothing, and costs one error.
// `/// <reference lib|types|path>` directives likewise: one that reached a shared program would load
// its library (e.g. "dom") for every candidate checked with it, so each is removed and charged.
function directives(source) {
  const found = [...(source.commentDirectives || [])].map((d) => d.range.pos);
  if (source.checkJsDirective && !source.checkJsDirective.enabled) found.push(source.checkJsDirective.pos);
  const suppressions = found.map((pos) => [pos, "a type-check suppression directive"]);
  for (const list of [source.libReferenceDirectives, source.typeReferenceDirectives, source.referencedFiles]) {
    for (const reference of list || []) suppressions.push([reference.pos, "a reference directive"]);
  }
  return suppressions.map(([pos, message]) => {
    const where = source.getLineAndCharacterOfPosition(pos);
    return { line: where.line + 1, column: where.character + 1, code: 0, message };
  });
}

function disarm(source) {
  const found = directives(source);
  source.commentDirectives = undefined;
  source.checkJsDirective = undefined;
  source.libReferenceDirectives = [];
  source.typeReferenceDirectives = [];
  source.referencedFiles = [];
  return found;
}

// Progress lines (`{"progress": {"start": i}}` before candidate i is checked, `{"progress": {"done": i,
// "result": ...}}` after) go out as the batch is checked, so that when a batch runs out of time the
// trusted side keeps what was finished and knows which candidate was being checked.
function progress(update) {
  process.stdout.write(JSON.stringify({ progress: update }) + "\n");
}

function checkGroup(sources, indexes) {
  const charged = sources.map(disarm);
  const byName = new Map(sources.map((s) => [s.fileName, s]));
  const host = {
    ...defaultHost,
    getSourceFile: (fileName, version) => byName.get(fileName) || libSource(fileName, version),
    fileExists: (name) => byName.has(name) || defaultHost.fileExists(name),
    readFile: (name) => (byName.has(name) ? byName.get(name).text : defaultHost.readFile(name)),
    writeFile: () => {},
  };
  const program = ts.createProgram([...byName.keys()], OPTIONS, host);
  return sources.map((s, k) => {
    progress({ start: indexes[k] });
    const result = {
      diagnostics: [...charged[k], ...diagnosticsOf(program, program.getSourceFile(s.fileName))],
      ...typeHoles(program, program.getSourceFile(s.fileName)),
    };
    progress({ done: indexes[k], result });
    return result;
  });
}

function checkMany(files) {
  const results = new Array(files.length);
  const shared = [];
  files.forEach((file, index) => {
    const source = ts.createSourceFile(`/candidates/c${index}.ts`, file.text, {
      languageVersion: ts.ScriptTarget.ES2022,
      setExternalModuleIndicator: (sf) => {
        sf.externalModuleIndicator = true; // every candidate is a module: its declarations stay its own
      },
    }, true);
    if (reachesOthers(source)) results[index] = checkGroup([source], [index])[0];
    else shared.push([index, source]);
  });
  for (let start = 0; start < shared.length; start += CHUNK) {
    const group = shared.slice(start, start + CHUNK);
    checkGroup(group.map(([, source]) => source), group.map(([index]) => index)).forEach((result, k) => {
      results[group[k][0]] = result;
    });
  }
  return results;
}

// ---------------------------------------------------------------- build: TS -> JS with counters
// Every statement, loop body and function body is preceded by a call of `counter()` (a name the
// trusted side draws at random per build); concise arrow bodies become `(counter(), expr)`. The
// sandbox runner binds `counter` to a function that only increments, so knowing the name buys a
// candidate nothing but a higher count.
function counting(counter) {
  return (context) => {
    const f = context.factory;
    const tick = () => f.createExpressionStatement(f.createCallExpression(f.createIdentifier(counter), undefined, []));
    const statements = (list) => {
      const out = [];
      for (const statement of list) {
        const visited = ts.visitNode(statement, visit);
        if (
          ts.isFunctionDeclaration(statement) ||
          ts.isInterfaceDeclaration(statement) ||
          ts.isTypeAliasDeclaration(statement) ||
          ts.isClassDeclaration(statement)
        ) {
          out.push(visited);
        } else {
          out.push(tick(), visited);
        }
      }
      return out;
    };
    const asBlock = (statement) => {
      const visited = ts.visitNode(statement, visit);
      if (ts.isBlock(visited)) return visited;
      return f.createBlock([tick(), visited], true);
    };
    const visit = (node) => {
      if (ts.isBlock(node)) {
        return f.updateBlock(node, [tick(), ...statements(node.statements)]);
      }
      if (ts.isCaseClause(node)) {
        return f.updateCaseClause(node, ts.visitNode(node.expression, visit), statements(node.statements));
      }
      if (ts.isDefaultClause(node)) {
        return f.updateDefaultClause(node, statements(node.statements));
      }
      if (ts.isForStatement(node)) {
        return f.updateForStatement(
          node,
          ts.visitNode(node.initializer, visit),
          ts.visitNode(node.condition, visit),
          ts.visitNode(node.incrementor, visit),
          asBlock(node.statement),
        );
      }
      if (ts.isForOfStatement(node)) {
        return f.updateForOfStatement(
          node, node.awaitModifier, ts.visitNode(node.initializer, visit),
          ts.visitNode(node.expression, visit), asBlock(node.statement),
        );
      }
      if (ts.isForInStatement(node)) {
        return f.updateForInStatement(
          node, ts.visitNode(node.initializer, visit), ts.visitNode(node.expression, visit), asBlock(node.statement),
        );
      }
      if (ts.isWhileStatement(node)) {
        return f.updateWhileStatement(node, ts.visitNode(node.expression, visit), asBlock(node.statement));
      }
      if (ts.isDoStatement(node)) {
        return f.updateDoStatement(node, asBlock(node.statement), ts.visitNode(node.expression, visit));
      }
      if (ts.isIfStatement(node)) {
        return f.updateIfStatement(
          node, ts.visitNode(node.expression, visit), asBlock(node.thenStatement),
          node.elseStatement ? asBlock(node.elseStatement) : undefined,
        );
      }
      if (ts.isArrowFunction(node) && !ts.isBlock(node.body)) {
        const body = ts.visitNode(node.body, visit);
        return f.updateArrowFunction(
          node, node.modifiers, node.typeParameters, node.parameters, node.type, node.equalsGreaterThanToken,
          f.createParenthesizedExpression(f.createCommaListExpression([f.createCallExpression(f.createIdentifier(counter), undefined, []), body])),
        );
      }
      return ts.visitEachChild(node, visit, context);
    };
    return (source) => f.updateSourceFile(source, statements(source.statements));
  };
}

// The sandbox runs the JavaScript as a script (no module system, no `exports`), so `export` would
// fail at load an honest program that writes `export function f` or `export {}`: the export syntax
// is blanked (positions kept) before transpiling. It exports nothing anyone reads: the runner finds
// the entry point by name.
function withoutExports(text) {
  const source = ts.createSourceFile("candidate.ts", text, ts.ScriptTarget.ES2022, true);
  const spans = [];
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement)) {
      spans.push([statement.getStart(source), statement.end]);
    } else if (ts.isExportAssignment(statement)) {
      spans.push([statement.getStart(source), statement.expression.getStart(source)]);
    } else if (ts.canHaveModifiers(statement)) {
      for (const modifier of ts.getModifiers(statement) || []) {
        if (modifier.kind === ts.SyntaxKind.ExportKeyword || modifier.kind === ts.SyntaxKind.DefaultKeyword) {
          spans.push([modifier.getStart(source), modifier.end]);
        }
      }
    }
  }
  if (spans.length === 0) return text;
  let out = "";
  let cursor = 0;
  for (const [start, end] of spans) {
    out += text.slice(cursor, start) + text.slice(start, end).replace(/[^\r\n]/g, " ");
    cursor = end;
  }
  return out + text.slice(cursor);
}

function build(file, counter) {
  try {
    const out = ts.transpileModule(withoutExports(file.text), {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.None, removeComments: true },
      transformers: counter ? { before: [counting(counter)] } : undefined,
      reportDiagnostics: false,
    });
    return { js: out.outputText };
  } catch (error) {
    return { error: clip(String(error && error.message), 300) };
  }
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  let answer;
  try {
    const request = JSON.parse(line);
    if (request.op === "check") answer = { results: checkMany(request.files) };
    else if (request.op === "build") answer = { results: request.files.map((file) => build(file, request.counter)) };
    else if (request.op === "ping") answer = { pong: ts.version };
    else answer = { error: "unknown op" };
  } catch (error) {
    answer = { error: clip(String(error && error.stack), 500) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
});
