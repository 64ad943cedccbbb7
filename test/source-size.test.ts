/**
 * Source files and functions stay small enough to read: no file under src/ over 500 lines and no named
 * function over 150 lines, unless a `// size: <reason>` comment says why — at the top of the file, or on the
 * line right above the function (above its JSDoc, if it has one, or inside it). Measured with TypeScript's
 * parser, so a function's size is its own text, from its first line to its last.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { expect, it } from 'vitest';

const SRC = path.join(import.meta.dirname, '..', 'src');
const MAX_FILE_LINES = 500;
const MAX_FUNCTION_LINES = 150;
const REASON = /\/\/ size: \S/;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The function's name, when it has one of its own: a declaration, a method, or a variable or property holding it. */
function nameOf(node: ts.Node): string | undefined {
  if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isGetAccessor(node))
    return node.name?.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
    const parent = node.parent;
    if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
      return parent.name.getText();
  }
  return undefined;
}

/** Whether a `// size:` comment sits on the lines just above `node`'s statement (its comments included) or its first line. */
function hasReason(source: ts.SourceFile, node: ts.Node): boolean {
  let holder: ts.Node = node;
  while (
    holder.parent &&
    (ts.isVariableDeclaration(holder.parent) ||
      ts.isVariableDeclarationList(holder.parent) ||
      ts.isVariableStatement(holder.parent) ||
      ts.isPropertyAssignment(holder.parent) ||
      ts.isExportAssignment(holder.parent))
  )
    holder = holder.parent;
  const leading = source.text.slice(holder.getFullStart(), holder.getStart());
  const firstLine = source.text.slice(node.getStart(), source.text.indexOf('\n', node.getStart()));
  const body = source.text.slice(node.getStart(), node.getEnd()).split('\n').slice(1, 4).join('\n');
  return REASON.test(leading) || REASON.test(firstLine) || REASON.test(body);
}

it('keeps every file under 500 lines and every named function under 150, or says why beside it', () => {
  const unexplained: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const text = fs.readFileSync(file, 'utf8');
    const where = path.relative(path.dirname(SRC), file);
    const lines = text.split('\n').length;
    const head = text.split('\n').slice(0, 15).join('\n');
    if (lines > MAX_FILE_LINES && !REASON.test(head)) unexplained.push(`${where}: ${lines} lines`);
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      const name = nameOf(node);
      if (name !== undefined) {
        const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        if (last - first + 1 > MAX_FUNCTION_LINES && !hasReason(source, node))
          unexplained.push(`${where}:${first + 1} ${name}: ${last - first + 1} lines`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  expect(unexplained, 'split these, or write `// size: <reason>` beside them').toEqual([]);
});
