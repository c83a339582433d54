import { request, type IncomingHttpHeaders } from 'node:http';

/** One request on a fresh connection (so the kernel picks a listener each time); the path goes out as written. */
export function fresh(url: string, opts: { method?: string; body?: string | Buffer; headers?: Record<string, string> } = {}): Promise<{ status: number; body: Buffer; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    // the path is sent as written (a URL object would resolve `..` and `%2e%2e` before sending)
    const m = /^http:\/\/(\[[^\]]+\]|[^/:]+):(\d+)(.*)$/.exec(url)!;
    const req = request({ host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]), path: m[3] || '/', method: opts.method ?? 'GET', agent: false, headers: { connection: 'close', ...opts.headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Test config: threads on, memfs writes open, sessions off (so threads answer memfs reads themselves). */
export function threadsConfig(threads: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    http: { threads },
    sessions: { enable: false },
    storage: { memory: { auth: { enable: false } } },
    ...extra,
  };
}
