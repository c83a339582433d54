import { Type, type Static } from '@sinclair/typebox';
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors.ts';
import type { FilesystemService, FsFileInfo } from './fs.ts';
import { cleanFsPath } from './fs-path.ts';

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

/**
 * Query of a file listing (`GET /api/v3/fs/{name}`).
 *
 * @example
 * s.get('/vendor/files', { schema: { querystring: FsListQuery } }, handler);
 */
export const FsListQuery = Type.Object({
  glob: Type.Optional(Type.String()),
  sort: Type.Optional(Type.String({ description: 'none, name, size, lastmod (default none)' })),
  order: Type.Optional(Type.String({ description: 'asc or desc (default asc)' })),
});
/** The decoded query of a file listing. */
export type FsListQuery = Static<typeof FsListQuery>;

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

/**
 * The filesystem a name (or one of its aliases) stands for in a registry list, e.g. in
 * `/api/v3/fs/{name}` or a cleanup pattern `memfs:/x_*.ts`. Names win over aliases.
 *
 * @example
 * const mem = findFilesystem(ctx.deps.filesystems, 'memfs'); // the `mem` filesystem
 */
export function findFilesystem(list: readonly FilesystemService[], name: string): FilesystemService | undefined {
  return list.find((f) => f.name === name) ?? list.find((f) => f.aliases?.includes(name));
}

/**
 * The body of a link request (`PATCH /api/v3/fs/mem/{path}`), read up to 64 KiB, trimmed.
 *
 * @example
 * const target = linkTarget(await readLinkBody(request), fs.mount);
 */
export async function readLinkBody(request: FastifyRequest): Promise<string> {
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

/**
 * A link body is a path, or a URL whose path is used (a leading mount such as `/memfs` is dropped).
 *
 * @example
 * linkTarget('http://host/memfs/a.ts', '/memfs'); // '/a.ts'
 */
export function linkTarget(body: string, mount: string): string {
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
