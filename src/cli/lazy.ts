/**
 * The library (drivers, schemas, validation) is loaded when a command runs: --help, --version and a usage
 * error load none of it, and start as fast as node itself. The commands reach it only through these.
 */
import type { writeHermesExport as WriteHermesExport } from '../codecs/hermes-export.js';
import type { openStore as OpenStore } from '../open.js';
import type { SessionStore } from '../store.js';
import type { copyStore as CopyStore } from '../transfer/copy.js';
import type { importFromSource as ImportFromSource } from '../transfer/hermes-import.js';
import type { HermesFileSource, RowSource } from '../transfer/sources.js';
import type { verifyTransfer as VerifyTransfer } from '../transfer/verify.js';

export const openStore = async (...args: Parameters<typeof OpenStore>) =>
  (await import('../open.js')).openStore(...args);
export const copyStore = async (...args: Parameters<typeof CopyStore>) =>
  (await import('../transfer/copy.js')).copyStore(...args);
export const importFromSource = async (...args: Parameters<typeof ImportFromSource>) =>
  (await import('../transfer/hermes-import.js')).importFromSource(...args);
export const verifyTransfer = async (...args: Parameters<typeof VerifyTransfer>) =>
  (await import('../transfer/verify.js')).verifyTransfer(...args);
export const writeHermesExport = async (...args: Parameters<typeof WriteHermesExport>) =>
  (await import('../codecs/hermes-export.js')).writeHermesExport(...args);
export const openHermesFile = async (file: string): Promise<HermesFileSource> =>
  (await import('../transfer/sources.js')).HermesFileSource.open(file);
export const storeSource = async (store: SessionStore): Promise<RowSource> =>
  (await import('../transfer/sources.js')).storeSource(store);
