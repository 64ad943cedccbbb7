/**
 * `npm run lint:package`: lint the package as users get it. Packs it (the shared, content-hashed tarball the
 * package tests install) and runs publint and @arethetypeswrong/cli on that tarball. Exits non-zero on any problem.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { packedTarball, ROOT } from '../test/helpers/package.js';

const tarball = await packedTarball();
const bin = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);

const checks: Array<[string, string[]]> = [
  // --strict: publint's warnings fail too.
  ['publint', ['run', tarball, '--strict']],
  [
    'attw',
    [
      tarball,
      // The package is ESM with a `require` condition on the same files: Node ^20.19 / >=22.12 loads them with
      // require(esm), and TypeScript >= 5.8 types it under `module: nodenext`. attw (TypeScript 5.6 inside)
      // predates both and reports every `require` resolution as cjs-resolves-to-esm; the package tests prove
      // the require path for real (test/package/load.test.ts, consumer-types.test.ts).
      '--ignore-rules',
      'cjs-resolves-to-esm',
      // The package ships its own types: no @types lookup in the registry.
      '--no-definitely-typed',
      '--no-emoji',
      '--no-color',
    ],
  ],
];

let failed = 0;
for (const [name, args] of checks) {
  console.log(`\n$ ${name} ${args.map((a) => (a === tarball ? path.relative(ROOT, a) : a)).join(' ')}`);
  const run = spawnSync(bin(name), args, { cwd: ROOT, stdio: 'inherit' });
  if (run.status !== 0) {
    console.error(`${name} failed (exit ${run.status ?? run.signal})`);
    failed++;
  }
}
process.exitCode = failed === 0 ? 0 : 1;
