import * as nodeModule from 'node:module';

/** Node 22.1+ (the pinned 24 has them; the typings of this repository predate them). */
interface CompileCacheApi {
  enableCompileCache?: (dir?: string) => { status: number; message?: string; directory?: string };
  flushCompileCache?: () => void;
}
const api = nodeModule as unknown as CompileCacheApi;

/**
 * Node's on-disk cache of compiled modules (issue 46.4): the service loads about 880 modules at
 * every start, and V8's compiling them was about a sixth of that (the cache took the module
 * graph from about 265 to 222 ms of CPU on a 2-core box). `dir` belongs with the code (the
 * entry passes `node_modules/.cache/` of the installation, which the install step writes like
 * the built JavaScript): children cannot write there, and neither can another user, as they
 * could a shared temporary folder. An entry whose source changed is compiled again (V8 checks
 * the source's hash), and `scripts/build.mjs` empties the folder whenever it rebuilt something, so
 * it holds the current build only; a folder that cannot be written leaves the start as it was; the operator's
 * `NODE_COMPILE_CACHE` (another folder) or `NODE_DISABLE_COMPILE_CACHE=1` win. Call it before the
 * service's modules are imported; `flushCompiled()` once it runs writes what was compiled.
 */
export function enableCompiledCache(dir: string): void {
  try {
    api.enableCompileCache?.(dir);
  } catch { /* an unwritable folder: compiled as before */ }
}

/** Writes the entries compiled so far (instead of at exit only: a killed service keeps them too). */
export function flushCompiled(): void {
  try {
    api.flushCompileCache?.();
  } catch { /* as above */ }
}
