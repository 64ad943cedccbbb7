/**
 * Child process for lazy-loading.test.ts: records every module URL Node resolves (a resolve hook, registered
 * before the package is imported), imports the package entry, opens an in-memory SQLite store, then a PGlite
 * one, and prints after each step which resolved URLs mention pglite.
 */
import { register } from 'node:module';
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

/** The pglite modules resolved so far: the hook's messages are ordered, so once the sentinel is seen all earlier ones are in. */
async function pgliteModules(): Promise<string[]> {
  const seen = new Promise<void>((resolve) => (onSentinel = resolve));
  await import(`${SENTINEL}`);
  await seen;
  resolved.splice(resolved.indexOf(SENTINEL), 1);
  return resolved.filter((url) => url.includes('pglite'));
}

const entry = process.argv[2];
if (!entry) throw new Error('usage: module-load-probe.ts <package entry>');
const pkg = (await import(entry)) as typeof import('../../src/index.js');
await (await pkg.openStore(':memory:')).close();
console.log(JSON.stringify({ step: 'sqlite', pglite: await pgliteModules() }));
await (await pkg.openStore('pglite:memory')).close();
console.log(JSON.stringify({ step: 'pglite', pglite: await pgliteModules() }));
