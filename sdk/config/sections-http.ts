import { Type, type Static } from '@sinclair/typebox';
import { describe } from './describe.ts';

/* The `http` section (core): how the API listener serves; not in the reference, which serves on every core. */

/** Most serving threads `http.threads` accepts (a thread costs its own heap). */
export const MAX_SERVING_THREADS = 64;

export const HttpConfig = describe(Type.Object({
  threads: Type.Integer({ default: 0 }),
}, { default: {} }), {
  threads: `Serving threads beside the main loop (0 = the main loop serves alone, the default for now; up to ${MAX_SERVING_THREADS}; `
    + '-1 = auto: none below 4 cores, else one per core but one). '
    + 'Each listens on the API port (reusePort) and answers memfs and disk GET/HEAD (and memfs uploads while memfs auth is off) itself; everything else goes to the main thread. HTTP only (HTTPS stays on the main thread).',
});
export type HttpConfig = Static<typeof HttpConfig>;
