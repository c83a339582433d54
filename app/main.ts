/*
 * The service's entry (`node app/main.js`, `npm start`). First the runtime flags: the core's
 * relaunch.ts replaces this process with one that has them (core/runtime/README.md) before anything
 * else is even parsed; the service itself (cli.ts) is imported only after, so the first process
 * does not load the module graph it would throw away. Its modules come through Node's compile
 * cache (core/runtime/compile-cache.ts), kept with the installation, and dependencies of many
 * small files (TypeBox, fastify, ...) from their packs (core/runtime/packed.ts).
 */
import '../core/runtime/relaunch.ts';
import { fileURLToPath } from 'node:url';
import { enableCompiledCache, flushCompiled } from '../core/runtime/compile-cache.ts';
import { usePacks } from '../core/runtime/packed.ts';

enableCompiledCache(fileURLToPath(new URL('../node_modules/.cache/media-core/compiled', import.meta.url)));
// dependencies of many small files load as one (scripts/pack-cjs.mjs, made by the build)
usePacks(fileURLToPath(new URL('../', import.meta.url)), fileURLToPath(new URL('../node_modules/.cache/media-core/packed', import.meta.url)));
await import('./cli.ts');
flushCompiled();
