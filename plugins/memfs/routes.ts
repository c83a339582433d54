import type { FastifyRequest } from 'fastify';
import {
  CorsPolicy, addFastPath, clientAddress, registerFsMount, type BasicAuthService, type FsServeHooks, type HttpScope, type MimeTable,
} from '../../sdk/index.ts';
import type { Logger } from 'pino';
import { memfsErrors } from './errors.ts';
import type { MemFilesystem } from './service.ts';
import type { MemfsConfig } from './schema.ts';
import { memfsFastPath } from './fast-path.ts';

export interface MemfsRoutesOptions {
  fs: MemFilesystem;
  mime: MimeTable;
  config: MemfsConfig;
  corsOrigins: readonly string[];
  basicAuth: BasicAuthService | undefined;
  log: Logger;
  hooks: FsServeHooks;
}

/**
 * The public `/memfs/*` (the core serves `/api/v3/fs/mem` from the registry): GET/HEAD for
 * everyone, PUT/POST/DELETE behind basic auth when `storage.memory.auth.enable` is on; plain
 * reads take the fast path. Returns what undoes the fast path (for `onClose`).
 */
export function memfsRoutes(http: HttpScope, o: MemfsRoutesOptions): () => void {
  const cors = new CorsPolicy(o.corsOrigins);
  registerFsMount(http, o.fs, {
    mime: o.mime,
    defaultType: 'application/data',
    cors,
    writes: { authorize: writeCheck(o) },
    hooks: o.hooks,
  });
  return addFastPath(http.server, memfsFastPath(o.fs, cors, o.hooks));
}

function writeCheck(o: MemfsRoutesOptions): (request: FastifyRequest) => void | Promise<void> {
  const { enable, username, password } = o.config.auth;
  if (!enable) return () => {};
  const basic = o.basicAuth;
  // with the backoff of wrong credentials per client address (a provider of SDK 1.1 has none)
  if (basic?.check) return (request) => basic.check!({ address: clientAddress(request), authorization: request.headers.authorization }, { username, password });
  if (basic) return (request) => basic.verify(request, { username, password });
  let warned = false;
  return () => {
    if (!warned) {
      warned = true;
      o.log.warn('storage.memory.auth.enable is on but no plugin provides basic auth (load the auth plugin): writes to /memfs are refused');
    }
    throw memfsErrors.authUnavailable();
  };
}
