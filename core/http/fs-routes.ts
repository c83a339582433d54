import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  ApiError, isApiError, FileInfoSchema, FilesystemInfoSchema, FsListQuery, Type, acceptRawBodies,
  findFilesystem, fsPathFromUrl, ignoreContentType, linkTarget, readLinkBody,
  sortFileInfos, type FilesystemService, type FsFileInfo, type HttpScope,
} from '../../sdk/index.ts';
import { continueUpload, deferContinue } from '../door/install.ts';
import type { ApiFiles } from '../door/main.ts';

const PREFIX = '/api/v3/fs/';

/**
 * `/api/v3/fs` (protected), served from the filesystem registry (`filesystemsRef`), whatever
 * plugins provide filesystems: `GET /api/v3/fs` lists them (names only, aliases are not listed),
 * `GET /api/v3/fs/{name}` lists files (`glob`, `sort`, `order`), and `{name}/{path}` answers
 * GET/HEAD (type `application/data` for unknown extensions), PUT (201/204, raw body, 507 when
 * full), DELETE (200/404) and, for filesystems with `link`, PATCH (201; 400 when the target is
 * missing). A name or alias nobody provides is 404 `File not found`.
 */
export function fsApiRoutes(filesystems: () => readonly FilesystemService[], files: ApiFiles) {
  const find = (request: FastifyRequest) => {
    const name = (request.params as { name: string }).name;
    const fs = findFilesystem(filesystems(), name);
    if (!fs) throw new ApiError(404, 'File not found', [`unknown filesystem: ${name}`], 'FS_UNKNOWN');
    const slash = request.url.indexOf('/', PREFIX.length);
    const prefix = request.url.slice(0, slash < 0 ? undefined : slash);
    return { fs, prefix, path: fsPathFromUrl(request.url, prefix) };
  };
  const tags = ['v16.7.2'];
  return async (s: HttpScope) => {
    acceptRawBodies(s);
    deferContinue(s, PREFIX);
    s.get('/api/v3/fs', {
      schema: { summary: 'List all filesystems', tags, response: { 200: Type.Array(FilesystemInfoSchema) } },
    }, async () => filesystems().map((fs) => ({ name: fs.name, type: fs.type, mount: fs.mount })));

    s.get('/api/v3/fs/:name', {
      schema: {
        summary: 'List files of a filesystem', tags, querystring: FsListQuery,
        params: Type.Object({ name: Type.String() }), response: { 200: Type.Array(FileInfoSchema) },
      },
    }, async (request) => {
      const { fs } = find(request);
      const q = request.query as FsListQuery;
      let files: FsFileInfo[];
      try {
        files = await fs.list(q.glob || undefined);
      } catch (err) {
        // a store that cannot list (an S3 outage: 503/504) says so
        if (isApiError(err) && err.status >= 500) throw err;
        files = []; // an invalid glob lists nothing, as the reference says
      }
      return sortFileInfos(files, q.sort || 'none', q.order || 'asc');
    });

    const file = (summary: string) => ({ summary, tags, params: Type.Object({ name: Type.String(), '*': Type.String() }) });
    s.route({
      method: ['GET', 'HEAD'], url: '/api/v3/fs/:name/*', exposeHeadRoute: false, schema: file('Read a file'),
      handler(request, reply) {
        const f = find(request);
        // the file door's read answer (core/door), the same as the public mounts'
        reply.hijack();
        files.read(f.fs, f.prefix, f.path, request.raw, reply.raw);
      },
    });
    // the file door's upload taker (core/door), the same as the public mounts'
    const write = (request: FastifyRequest, reply: FastifyReply) => {
      const f = find(request);
      continueUpload(request.raw, reply.raw);
      reply.hijack();
      files.write(f.fs, f.prefix, f.path, request.raw, reply.raw);
    };
    s.put('/api/v3/fs/:name/*', { schema: file('Write a file (raw body)'), onRequest: ignoreContentType }, write);
    s.delete('/api/v3/fs/:name/*', { schema: file('Delete a file') }, write);
    s.patch('/api/v3/fs/:name/*', { schema: file('Create a link to an existing file (memory filesystem)'), onRequest: ignoreContentType }, async (request, reply) => {
      const f = find(request);
      if (!f.fs.link) throw new ApiError(404, 'Not Found', ['Not Found'], 'ROUTE_NOT_FOUND');
      continueUpload(request.raw, reply.raw);
      const target = linkTarget(await readLinkBody(request), f.fs.mount);
      await f.fs.link(f.path, target);
      reply.header('content-location', request.url);
      return reply.code(201).type('text/plain; charset=utf-8').send('');
    });
  };
}
