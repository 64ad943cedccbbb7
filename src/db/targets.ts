/**
 * What openStore accepts: a store URL, or a client the app already has. The engine is picked from the URL's
 * scheme or from the client's shape (not instanceof: the app may load its own copy of the driver package).
 */
import type { AnyEngine, ClientTarget, StoreLocation } from './engines.js';
import { engines } from './engines.js';
import { readStoreUrl } from './url.js';

export type { StoreTarget } from './engines.js';

/** The engine for `target` and what it opens: a location it parsed, or the client passed in. */
export type PickedTarget =
  | { engine: AnyEngine; location: StoreLocation; client?: undefined }
  | { engine: AnyEngine; client: ClientTarget; location?: undefined };

/** The engine and request for `target`, or undefined when it is no URL and no client any engine knows. */
export function pickEngine(target: unknown): PickedTarget | undefined {
  if (typeof target === 'string') return readStoreUrl(target);
  if (target === null || (typeof target !== 'object' && typeof target !== 'function')) return undefined;
  for (const engine of engines) {
    const client = engine.classifyClient(target);
    if (client) return { engine, client };
  }
  return undefined;
}
