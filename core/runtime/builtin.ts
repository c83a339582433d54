import type * as Http from 'node:http';
import type * as Https from 'node:https';

/**
 * node:http and node:https as `require` gives them. An `import { createServer } from 'node:http'`
 * makes Node build the module's ES facade, which reads every export once, and one of node:http's
 * is a getter that loads undici (fetch, WebSocket): about 30 ms of CPU at each start of the
 * service, and in each serving thread, for nothing it uses (issue 46.4). Only types are imported
 * from those modules elsewhere; `process.getBuiltinModule` (Node 22.3+) reads the CommonJS table.
 */
const builtin = (process as unknown as { getBuiltinModule(id: string): unknown }).getBuiltinModule.bind(process);

export const http = builtin('node:http') as typeof Http;
export const https = builtin('node:https') as typeof Https;
