import { Type, type Static } from '@sinclair/typebox';
import { describe } from './describe.ts';

/* The `http` section (core): how the API listener serves; not in the reference, which serves on every core. */

/** Most serving threads `http.threads` accepts (a thread costs its own heap). */
export const MAX_SERVING_THREADS = 64;
/** Most serving threads auto (`-1`) starts, whatever the core count (each costs about 30 MiB). */
export const AUTO_MAX_THREADS = 16;

export const HttpConfig = describe(Type.Object({
  threads: Type.Integer({ default: -1 }),
}, { default: {} }), {
  threads: `Serving threads beside the main loop: -1 = auto (the default: none below 4 cores, else one per core but one, at most ${AUTO_MAX_THREADS}), `
    + `0 = the main loop serves alone, or a number up to ${MAX_SERVING_THREADS}. `
    + 'Each listens on the API port, and the HTTPS port with TLS on (reusePort), and answers memfs and disk GET/HEAD and memfs uploads itself; everything else goes to the main thread.',
});
export type HttpConfig = Static<typeof HttpConfig>;
