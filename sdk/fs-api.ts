import { Type, type Static } from '@sinclair/typebox';
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors.ts';
import type { FilesystemService, FsFileInfo } from './fs.ts';
import type { HttpScope } from './http.ts';
import { cleanFsPath, fsPathFromUrl } from './fs-path.ts';
import type { MimeTable } from './fs-mime.ts';
import { continueUpload, deferContinue } from './fs-continue.ts';
import {
  acceptRawBodies, deleteFsFile, ignoreContentType, lookupFsNode, replyWritten, serveFs, writeFsUpload,
} from './fs-http.ts';

/**
 * `FileInfo` of the interface: one file of a listing.
 *
 * @example
 * ctx.http.get('/vendor/files', { schema: { response: { 200: Type.Array(FileInfoSchema) } } }, async () => fs.list());
 */
export const FileInfoSchema = Type.Object({
  name: Type.String(),
  size_bytes: Type.Integer(),
  last_modified: Type.Integer({ description: 'Unix seconds' }),
});

/**
 * `FilesystemInfo`: name, type and public mount of one filesystem (`GET /api/v3/fs`).
 *
 * @example
 * const info: Static<typeof FilesystemInfoSchema> = { name: 'mem', type: 'mem', mount: '/memfs' };
 */
export const FilesystemInfoSchema = Type.Object({ name: Type.String(), type: Type.String(), mount: Type.String() });

const ListQuery = Type.Object({
  glob: Type.Optional(Type.String()),
  sort: Type.Optional(Type.String({ description: 'none, name, size, lastmod (default none)' })),
  order: Type.Optional(Type.String({ description: 'asc or desc (default asc)' })),
});
type ListQuery = Static<typeof ListQuery>;

/**
 * Sorts a listing as the reference does: name/size ascending unless `desc`; otherwise by time.
 *
 * @example
 * sortFileInfos(await fs.list('/live/*.ts'), 'lastmod', 'desc'); // newest first
 */
export function sortFileInfos(files: FsFileInfo[], sort = 'none', order = 'asc'): FsFileInfo[] {
  const dir = order === 'desc' ? -1 : 1;
  if (sort === 'name') return files.sort((a, b) => dir * (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (sort === 'size') return files.sort((a, b) => dir * (a.size_bytes - b.size_bytes) || (a.name < b.name ? -1 : 1));
  const tdir = order === 'asc' ? 1 : -1;
  return files.sort((a, b) => tdir * (a.last_modified - b.last_modified) || (a.name < b.name ? -1 : 1));
}

interface Registered {
  fs: FilesystemService;
  mime: MimeTable;
}

/** One registry per app (keyed by its HTTP server), so two apps in one process stay apart. */
const registries = new WeakMap<object, Map<string, Registered>>();

/**
 * Adds a filesystem to `/api/v3/fs` (protected): `GET /api/v3/fs` lists filesystems,
 * `GET /api/v3/fs/{name}` lists files (`glob`, `sort`, `order`), and `{name}/{path}` answers
 * GET/HEAD (type `application/data` for unknown extensions), PUT (201/204, raw body, 507 when
 * full), DELETE (200/404) and, for filesystems with `link`, PATCH (201; 400 when the target is
 * missing). Unknown names are 404 `File not found`. The first call of an app mounts the routes.
 *
 * @example
 * registerFsApi(ctx.http, memfs, { mime });
 */
export function registerFsApi(scope: HttpScope, fs: FilesystemService, opts: { mime: MimeTable }): void {
  let reg = registries.get(scope.server);
  if (reg === undefined) {
    reg = new Map();
    registries.set(scope.server, reg);
    scope.register(apiRoutes(reg));
  }
  if (reg.has(fs.name)) throw new Error(`filesystem '${fs.name}' is already registered at /api/v3/fs`);
  reg.set(fs.name, { fs, mime: opts.mime });
}

function apiRoutes(reg: Map<string, Registered>) {
  const PREFIX = '/api/v3/fs/';
  const find = (request: FastifyRequest) => {
    const name = (request.params as { name: string }).name;
    const r = reg.get(name);
    if (!r) throw new ApiError(404, 'File not found', [`unknown filesystem: ${name}`], 'FS_UNKNOWN');
    const slash = request.url.indexOf('/', PREFIX.length);
    const prefix = request.url.slice(0, slash < 0 ? undefined : slash);
    return { ...r, prefix, path: fsPathFromUrl(request.url, prefix) };
  };
  const tags = ['v16.7.2'];
  return async (s: HttpScope) => {
    acceptRawBodies(s);
    deferContinue(s.server, PREFIX);
    s.get('/api/v3/fs', {
      schema: { summary: 'List all filesystems', tags, response: { 200: Type.Array(FilesystemInfoSchema) } },
    }, async () => [...reg.values()].map(({ fs }) => ({ name: fs.name, type: fs.type, mount: fs.mount })));

    s.get('/api/v3/fs/:name', {
      schema: {
        summary: 'List files of a filesystem', tags, querystring: ListQuery,
        params: Type.Object({ name: Type.String() }), response: { 200: Type.Array(FileInfoSchema) },
      },
    }, async (request) => {
      const { fs } = find(request);
      const q = request.query as ListQuery;
      let files: FsFileInfo[];
      try {
        files = await fs.list(q.glob || undefined);
      } catch {
        files = []; // an invalid glob lists nothing, as the reference says
      }
      return sortFileInfos(files, q.sort || 'none', q.order || 'asc');
    });

    const file = (summary: string) => ({ summary, tags, params: Type.Object({ name: Type.String(), '*': Type.String() }) });
    s.route({
      method: ['GET', 'HEAD'], url: '/api/v3/fs/:name/*', exposeHeadRoute: false, schema: file('Read a file'),
      handler(request, reply) {
        const f = find(request);
        const opts = { mime: f.mime, defaultType: 'application/data', prefix: f.prefix };
        return serveFs(request, reply, f.path, lookupFsNode(f.fs, f.path), opts);
      },
    });
    s.put('/api/v3/fs/:name/*', { schema: file('Write a file (raw body)'), onRequest: ignoreContentType }, async (request, reply) => {
      const f = find(request);
      return replyWritten(request, reply, await writeFsUpload(f.fs, f.path, request, reply));
    });
    s.delete('/api/v3/fs/:name/*', { schema: file('Delete a file') }, async (request, reply) => {
      const f = find(request);
      return deleteFsFile(f.fs, f.path, reply);
    });
    s.patch('/api/v3/fs/:name/*', { schema: file('Create a link to an existing file (memory filesystem)'), onRequest: ignoreContentType }, async (request, reply) => {
      const f = find(request);
      if (!f.fs.link) throw new ApiError(404, 'Not Found', ['Not Found'], 'ROUTE_NOT_FOUND');
      continueUpload(request.raw, reply.raw);
      const target = linkTarget(await readText(request), f.fs.mount);
      await f.fs.link(f.path, target);
      reply.header('content-location', request.url);
      return reply.code(201).type('text/plain; charset=utf-8').send('');
    });
  };
}

async function readText(request: FastifyRequest): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  // stop reading without destroying the request: the core drains the rest behind the 400
  for await (const c of ((request.body ?? request.raw) as Readable).iterator({ destroyOnReturn: false })) {
    size += c.length;
    if (size > 64 * 1024) throw new ApiError(400, 'Bad Request', ['link target is too long'], 'FS_LINK');
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString('utf8').trim();
}

/** A link body is a path, or a URL whose path is used (a leading mount such as `/memfs` is dropped). */
function linkTarget(body: string, mount: string): string {
  if (!body) throw new ApiError(400, 'Bad Request', ['the body must name the link target'], 'FS_LINK');
  let p = body;
  const isUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(body);
  if (isUrl) {
    try {
      p = new URL(body).pathname;
    } catch {
      throw new ApiError(400, 'Bad Request', ['invalid link target URL'], 'FS_LINK');
    }
    if (mount !== '/' && (p === mount || p.startsWith(`${mount}/`))) p = p.slice(mount.length);
  }
  return cleanFsPath(p, isUrl);
}
