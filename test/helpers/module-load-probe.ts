/**
 * Child process for lazy-loading.test.ts: records every module URL Node resolves (a resolve hook, registered
 * before anything of ours is imported), then runs the steps its arguments name and prints, after each, the
 * packages (and Drizzle entry points) resolved so far, as one JSON line.
 *
 *   module-load-probe.ts store <package entry> [postgres URL]: import the package, open and close an in-memory
 *     SQLite store and a SQLite file, a PGlite store, then (when given a URL) a store on a Postgres server
 *   module-load-probe.ts cli <cli entry>: import the CLI and run `--version`
 */
import fs from 'node:fs';
import { register } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';

const SENTINEL = 'data:text/javascript,export default "hermes-sessiondb-probe"';
const { port1, port2 } = new MessageChannel();
const resolved: string[] = [];
let onSentinel: (() => void) | undefined;
port1.on('message', (url: string) => {
  resolved.push(url);
  if (url === SENTINEL) onSentinel?.();
});
port1.unref();
const hook = `let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) { const r = await next(specifier, context); port.postMessage(r.url); return r; }`;
register(`data:text/javascript,${encodeURIComponent(hook)}`, { data: { port: port2 }, transferList: [port2] });

/**
 * The packages resolved so far (`postgres`, `@electric-sql/pglite`, …), and Drizzle's entry points by directory
 * (`drizzle-orm/postgres-js`, …). The hook's messages are ordered, so once the sentinel is seen all earlier ones are in.
 */
async function loaded(): Promise<string[]> {
  const seen = new Promise<void>((resolve) => (onSentinel = resolve));
  // Referenced while the sentinel is on its way: with nothing else left to do (a store just closed), an
  // unreferenced port would let the process exit first, with the await unsettled (exit code 13).
  port1.ref();
  await import(`${SENTINEL}`);
  await seen;
  port1.unref();
  resolved.splice(resolved.indexOf(SENTINEL), 1);
  const names = new Set<string>();
  for (const url of resolved) {
    const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\/(?:([^/]+)\/)?/.exec(url);
    if (!match) continue;
    names.add(match[1]!);
    if (match[1] === 'drizzle-orm' && match[2]) names.add(`drizzle-orm/${match[2]}`);
  }
  return [...names].sort();
}

const report = async (step: string) => console.log(JSON.stringify({ step, loaded: await loaded() }));

const [mode, entry, postgresUrl] = process.argv.slice(2);
if (mode === 'cli' && entry) {
  const cli = (await import(entry)) as typeof import('../../src/cli/main.js');
  let out = '';
  const code = await cli.main(['--version'], { out: (t) => (out += t), err: (t) => (out += t) });
  console.log(JSON.stringify({ step: 'version', code, out }));
  await report('cli');
} else if (mode === 'store' && entry) {
  const pkg = (await import(entry)) as typeof import('../../src/index.js');
  await report('import');
  await (await pkg.openStore(':memory:')).close();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-probe-'));
  try {
    await (await pkg.openStore(`sqlite:${path.join(dir, 'store.db')}`)).close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  await report('sqlite');
  await (await pkg.openStore('pglite:memory')).close();
  await report('pglite');
  if (postgresUrl) {
    await (await pkg.openStore(postgresUrl)).close();
    await report('postgres');
  }
} else {
  throw new Error('usage: module-load-probe.ts store <package entry> [postgres URL] | cli <cli entry>');
}
