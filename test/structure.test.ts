import assert from 'node:assert/strict';
import {
  mkdtempSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * The bounds of the codebase's structure (DEVELOPERS.md, docs/architecture.md): no import circle among the files of
 * `src/` (type-only imports count, as they tie the modules' designs together all the same), no source file over
 * 600 lines but the declaration tables below, no function over 80 lines.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MAX_FILE_LINES = 600;
const MAX_FUNCTION_LINES = 80;

/**
 * Files that may exceed the file bound: pure declaration tables, read as lists rather than as code (the closed
 * reason-code table, the object structures' definitions), which grow by one entry per code or structure.
 */
const DECLARATION_TABLES: ReadonlySet<string> = new Set([
  'src/reason-codes.ts',
  'src/metadata/object-structures.ts',
]);

const isSource = (name: string): boolean => /\.tsx?$/.test(name) && !name.endsWith('.d.ts');
const isTest = (name: string): boolean => /\.test\.tsx?$/.test(name);

/** The TypeScript files under `dir`, absolute paths, sorted; tests left out when asked. */
function sourceFiles(dir: string, options: { tests: boolean }): string[] {
  const found: string[] = [];
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'fixtures') walk(path);
      } else if (isSource(entry.name) && (options.tests || !isTest(entry.name))) found.push(path);
    }
  };
  if (existsSync(dir)) walk(dir);
  return found.sort();
}

function parse(file: string): ts.SourceFile {
  const kind = file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  return ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, kind);
}

/** Every module specifier the file names: imports (type-only too), re-exports, `import()` calls and types. */
function specifiersOf(source: ts.SourceFile): string[] {
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      specifiers.push(node.argument.literal.text);
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      specifiers.push(node.moduleReference.expression.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers;
}

/** The file a relative specifier names (`./x.js` is `./x.ts` in the sources), or undefined for a package. */
function resolveSpecifier(from: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = resolve(dirname(from), specifier);
  const candidates = [
    target.replace(/\.js$/, '.ts'),
    target.replace(/\.jsx$/, '.tsx'),
    target.replace(/\.js$/, '.tsx'),
    target,
    `${target}.ts`,
    `${target}.tsx`,
    join(target, 'index.ts'),
  ];
  return candidates.find((candidate) => files.has(candidate));
}

/** The import graph of the files: each file to the files of the tree it imports. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = specifiersOf(parse(file))
      .map((specifier) => resolveSpecifier(file, specifier, known))
      .filter((target): target is string => target !== undefined);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The import circles: strongly connected components of more than one file, or a file importing itself. */
function importCircles(files: readonly string[]): string[][] {
  const graph = importGraph(files);
  // Tarjan's algorithm, iterative so that a long import chain cannot overflow the stack.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  for (const start of files) {
    if (index.has(start)) continue;
    const work: Array<{ file: string; next: number }> = [{ file: start, next: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const targets = graph.get(frame.file) ?? [];
      if (frame.next < targets.length) {
        const target = targets[frame.next++]!;
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push({ file: target, next: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.file, Math.min(low.get(frame.file)!, index.get(target)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.file, Math.min(low.get(parent.file)!, low.get(frame.file)!));
      if (low.get(frame.file) !== index.get(frame.file)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.file);
      if (component.length > 1 || targets.includes(frame.file)) circles.push(component.sort());
    }
  }
  return circles;
}

/** A function over the bound: where it is, its name as a reader finds it, and its length in lines. */
interface LongFunction {
  file: string;
  name: string;
  lines: number;
}

function functionName(node: ts.Node, source: ts.SourceFile): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name) return named.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText(source);
  const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  return `function at line ${line}`;
}

/** Functions of the file longer than the bound, from their first token (comments aside) to their last. */
function longFunctions(file: string): LongFunction[] {
  const source = parse(file);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > MAX_FUNCTION_LINES)
        found.push({ file: relative(ROOT, file), name: functionName(node, source), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function lineCount(file: string): number {
  const text = readFileSync(file, 'utf8');
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** The code the bounds hold for: the service, the console, the benchmarks, and the tests' helpers (not the tests). */
const boundedFiles = (): string[] => [
  ...sourceFiles(join(ROOT, 'src'), { tests: false }),
  ...sourceFiles(join(ROOT, 'web'), { tests: false }),
  ...sourceFiles(join(ROOT, 'bench'), { tests: false }),
  ...sourceFiles(join(ROOT, 'test'), { tests: false }),
];

describe('structure', () => {
  test('no import circle in src/, type-only imports included', () => {
    const circles = importCircles(sourceFiles(join(ROOT, 'src'), { tests: false }));
    const described = circles.map((circle) => circle.map((file) => relative(ROOT, file)).join(' ↔ '));
    assert.deepEqual(described, []);
  });

  test(`no file over ${MAX_FILE_LINES} lines but the declaration tables`, () => {
    const long = boundedFiles()
      .map((file) => ({ file: relative(ROOT, file), lines: lineCount(file) }))
      .filter(({ file, lines }) => lines > MAX_FILE_LINES && !DECLARATION_TABLES.has(file))
      .map(({ file, lines }) => `${file} (${lines})`);
    assert.deepEqual(long, []);
  });

  test('the declaration tables allowed past the bound exist', () => {
    // A table renamed or split away would leave its exemption behind, free for other code to use.
    for (const file of DECLARATION_TABLES) assert.ok(existsSync(join(ROOT, file)), file);
  });

  test(`no function over ${MAX_FUNCTION_LINES} lines`, () => {
    const long = boundedFiles()
      .flatMap(longFunctions)
      .map(({ file, name, lines }) => `${file}: ${name} (${lines})`);
    assert.deepEqual(long, []);
  });
});

describe('the import circle detector', () => {
  const fixture = mkdtempSync(join(tmpdir(), 'eas-structure-'));
  after(() => rmSync(fixture, { recursive: true, force: true }));
  const write = (path: string, text: string): string => {
    const file = join(fixture, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  };

  test('finds a circle closed by a type-only import, through a .js specifier', () => {
    const files = [
      write('types/a.ts', "import { b } from './b.js';\nexport const a = b;\n"),
      write('types/b.ts', "import type { C } from './c.js';\nexport const b: C = 1;\n"),
      write('types/c.ts', "import type { a } from './a.js';\nexport type C = typeof a;\n"),
      write('types/leaf.ts', "import { a } from './a.js';\nexport const leaf = a;\n"),
    ];
    const circles = importCircles(files).map((circle) => circle.map((file) => relative(fixture, file)));
    assert.deepEqual(circles, [['types/a.ts', 'types/b.ts', 'types/c.ts']]);
  });

  test('finds circles closed by a re-export, a dynamic import, an import type and a folder index', () => {
    const files = [
      write('reexport/a.ts', "export * from './b.js';\n"),
      write('reexport/b.ts', "export { a } from './a.js';\n"),
      write('dynamic/a.ts', "export const load = () => import('./b.js');\n"),
      write('dynamic/b.ts', "import { load } from './a.js';\nexport const again = load;\n"),
      write('typeof/a.ts', "export type B = import('./b.js').B;\n"),
      write('typeof/b.ts', "import type { B as Other } from './a.js';\nexport type B = Other | 1;\n"),
      write('folder/index.ts', "export { user } from './user.js';\n"),
      write('folder/user.ts', "import type {} from './index.js';\nexport const user = 1;\n"),
    ];
    const circles = importCircles(files).map((circle) => relative(fixture, dirname(circle[0]!)));
    assert.deepEqual(circles.sort(), ['dynamic', 'folder', 'reexport', 'typeof']);
  });

  test('finds none in a tree that only imports downwards, nor through packages', () => {
    const files = [
      write('clean/app.ts', "import { service } from './service.js';\nimport ts from 'typescript';\n"),
      write(
        'clean/service.ts',
        "import type { Row } from './tables.js';\nexport const service = (r: Row) => r;\n",
      ),
      write('clean/tables.ts', "import type { Kysely } from 'kysely';\nexport type Row = Kysely<never>;\n"),
    ];
    assert.deepEqual(importCircles(files), []);
  });
});
