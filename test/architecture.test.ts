import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The direction of imports in src/: files never import each other in a circle, no two folders import each other
 * (directly or through other folders), and no import runs up the layers. Read from the source text, so it needs
 * no build and no database.
 *
 * The layers, top to bottom: the entry points (`cli.ts`, the process; `index.ts`, the library; `verify.ts`, its receiver side); the commands
 * (`cli/`); the composition (`app.ts`, `service.ts`, `openapi.ts`); the rooms (every folder, and `env.ts`, the
 * process environment); the base (`errors`, `limits`, `logger`, `version`).
 */

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');

const LAYERS = ['entry', 'commands', 'composition', 'rooms', 'base'] as const;
type Layer = (typeof LAYERS)[number];
/** Where each top-level file sits; a new one must be placed here (the first test says so). */
const TOP_LEVEL: Record<string, { folder: string; layer: Layer }> = {
  'cli.ts': { folder: 'entry', layer: 'entry' },
  'index.ts': { folder: 'entry', layer: 'entry' },
  'verify.ts': { folder: 'entry', layer: 'entry' },
  'app.ts': { folder: 'composition', layer: 'composition' },
  'service.ts': { folder: 'composition', layer: 'composition' },
  'openapi.ts': { folder: 'composition', layer: 'composition' },
  'env.ts': { folder: 'env', layer: 'rooms' },
  'errors.ts': { folder: 'base', layer: 'base' },
  'limits.ts': { folder: 'base', layer: 'base' },
  'logger.ts': { folder: 'base', layer: 'base' },
  'version.ts': { folder: 'base', layer: 'base' },
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** `src/alerts/cases.ts` → `alerts`; `src/errors.ts` → `base`; `src/app.ts` → `composition`. */
function folderOf(file: string): string {
  const parts = relative(SRC, file).split(sep);
  if (parts.length > 1) return parts[0]!;
  return TOP_LEVEL[parts[0]!]?.folder ?? 'unplaced';
}

function layerOf(file: string): Layer | undefined {
  const parts = relative(SRC, file).split(sep);
  if (parts.length > 1) return parts[0] === 'cli' ? 'commands' : 'rooms';
  return TOP_LEVEL[parts[0]!]?.layer;
}

const name = (file: string) => relative(SRC, file).split(sep).join('/');

/** The specifiers of `import … from`, `export … from`, `import '…'` and `import('…')`, packages included. */
function allSpecifiersOf(text: string): string[] {
  // Comments go first, so an example in a comment is not read as an import. `//` only after a space or at the
  // start of a line: `'postgres://…'` is a string, not a comment.
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/.*$/gm, '$1');
  const patterns = [/\b(?:import|export)\b[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g, /\bimport\s*['"]([^'"]+)['"]/g];
  return patterns.flatMap((pattern) => [...code.matchAll(pattern)].map((match) => match[1]!));
}

/** The relative specifiers: the imports of files of src/. */
const specifiersOf = (text: string) => allSpecifiersOf(text).filter((spec) => spec.startsWith('.'));

interface Edge {
  from: string;
  to: string;
}

function fileEdges(): { files: string[]; edges: Edge[]; unresolved: string[] } {
  const files = sourceFiles(SRC);
  const edges: Edge[] = [];
  const unresolved: string[] = [];
  for (const file of files) {
    for (const spec of specifiersOf(readFileSync(file, 'utf8'))) {
      // ESM source imports name the built file (`./x.js`); the source beside it is `./x.ts`.
      const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
      if (existsSync(target)) edges.push({ from: file, to: target });
      else unresolved.push(`${name(file)} → ${spec}`);
    }
  }
  return { files, edges, unresolved };
}

/** Strongly connected components with more than one member, or a member that reaches itself (Tarjan). */
function cycles(nodes: readonly string[], edges: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>(nodes.map((node) => [node, []]));
  for (const { from, to } of edges) next.get(from)!.push(to);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const to of next.get(node)!) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || next.get(node)!.includes(node)) found.push(component.sort());
  };
  for (const node of nodes) if (!index.has(node)) visit(node);
  return found;
}

const { files, edges, unresolved } = fileEdges();
const folderEdges = edges.map(({ from, to }) => ({ from: folderOf(from), to: folderOf(to), via: `${name(from)} → ${name(to)}` }));

describe('direction of imports in src/', () => {
  it('reads every import (a path that names no file would hide an edge)', () => {
    expect(files.length).toBeGreaterThan(40);
    expect(edges.length).toBeGreaterThan(100);
    expect(unresolved).toEqual([]);
  });

  it('has no import cycle between files', () => {
    expect(cycles(files, edges).map((component) => component.map(name))).toEqual([]);
  });

  it('has no two folders importing each other, directly or through other folders', () => {
    const crossing = folderEdges.filter((edge) => edge.from !== edge.to);
    const folders = [...new Set(files.map(folderOf))];
    const found = cycles(folders, crossing).map((component) => {
      // For each folder of the cycle, one import that leaves it for another folder of the cycle: where to start.
      const examples = crossing.filter((edge) => component.includes(edge.from) && component.includes(edge.to));
      return { folders: component, imports: [...new Map(examples.map((edge) => [`${edge.from}→${edge.to}`, edge.via])).values()] };
    });
    expect(found).toEqual([]);
  });

  it('places every top-level file in a layer', () => {
    expect(files.filter((file) => layerOf(file) === undefined).map(name)).toEqual([]);
  });

  it('has no import running up the layers (a room never imports the composition, the commands or an entry point)', () => {
    const rank = (file: string) => LAYERS.indexOf(layerOf(file)!);
    expect(edges.filter(({ from, to }) => rank(to) < rank(from)).map(({ from, to }) => `${name(from)} → ${name(to)}`)).toEqual([]);
  });

  it('keeps the API shapes (every schemas.ts and *-schemas.ts) free of Node: they and all they import take no package but typebox', () => {
    // The console imports their types (console/tsconfig.json has no Node types): a schema file that reached pg,
    // node:fs or the like, through any chain of imports, would stop the console's typecheck.
    const schemaFiles = files.filter((file) => /(^|[/-])schemas\.ts$/.test(name(file)));
    expect(schemaFiles.length).toBeGreaterThan(6);
    const reached = new Set<string>();
    const visit = (file: string): void => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const edge of edges) if (edge.from === file) visit(edge.to);
    };
    schemaFiles.forEach(visit);
    const packages = [...reached].flatMap((file) => allSpecifiersOf(readFileSync(file, 'utf8')).filter((spec) => !spec.startsWith('.')).map((spec) => `${name(file)} → ${spec}`));
    expect(packages.filter((via) => !via.endsWith('→ typebox'))).toEqual([]);
  });

  it("lays the console out in one scheme: a folder per feature (and components/ for what they share), no pages/ folder beside them", () => {
    const consoleDir = fileURLToPath(new URL('../console/src/', import.meta.url));
    const folders = readdirSync(consoleDir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect(folders).toContain('components');
    expect(folders.filter((folder) => ['pages', 'views', 'screens'].includes(folder))).toEqual([]);
  });

  it('keeps src/http free of any domain: route files of every folder import it', () => {
    const allowed = new Set(['http', 'base', 'db']);
    expect(folderEdges.filter((edge) => edge.from === 'http' && !allowed.has(edge.to)).map((edge) => edge.via)).toEqual([]);
  });
});
