import { ApiError, isApiError, type FsServeHooks } from '../../sdk/index.ts';
import type { MemFilesystem } from './service.ts';
import type { CommitReply, CommitRequest } from './thread-upload.ts';

/**
 * Main's side of an upload a serving thread received (thread-upload.ts): the route's Basic check
 * with its backoff (`authorize`: a thread takes only the right credential, but the answer must
 * wait as main's would, or a guess answered at once would be a hit), the same write as the
 * `/memfs` route's (`writeStream` with the announced length: quotas, 507, purge, events), then
 * `onWritten`, and the verdict for the thread. Errors become the route's status and Error body.
 */
export async function commitUpload(fs: MemFilesystem, hooks: FsServeHooks, m: CommitRequest,
  authorize?: (m: CommitRequest) => Promise<void>): Promise<CommitReply> {
  try {
    await authorize?.(m);
    const data = Buffer.from(m.data);
    const r = await fs.writeStream(m.path, [data], { length: data.length });
    if (hooks.onWritten.isUsed()) {
      const bytes = (await fs.stat(m.path))?.size_bytes ?? 0;
      hooks.onWritten.call({ mount: '/memfs', path: m.path, remote: m.remote, headers: m.headers, bytes });
    }
    return { op: 'reply', id: m.id, status: r.created ? 201 : 204 };
  } catch (err) {
    const e = isApiError(err) ? err : new ApiError(400, 'Bad Request', [(err as Error).message], 'FS_WRITE');
    return { op: 'reply', id: m.id, status: e.status, error: e.toBody(), errorHeaders: e.headers };
  }
}
