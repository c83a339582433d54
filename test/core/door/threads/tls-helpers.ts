import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { TestApp } from '../../../helpers/app.ts';
import type { TlsFiles } from '../../../helpers/certs.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { threadsConfig } from './helpers.ts';

export interface HttpsAnswer { status: number; body: Buffer; serial: string }

/** One HTTPS request on a fresh connection (the kernel picks a listener), trusting only `ca`. */
export function freshTls(port: number, path: string, ca: Buffer, opts: { method?: string; body?: Buffer; headers?: Record<string, string> } = {}): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const headers = { connection: 'close', ...opts.headers };
    const req = request({ host: '127.0.0.1', servername: 'localhost', port, path, ca, agent: false, method: opts.method ?? 'GET', headers }, (res) => {
      const serial = (res.socket as TLSSocket).getPeerCertificate().serialNumber;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), serial }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Threads on, TLS on a port 0 with `files`, plus `extra`. */
export function tlsThreadsConfig(threads: number, files: TlsFiles, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return threadsConfig(threads, { tls: { enable: true, address: '127.0.0.1:0', cert_file: files.certFile, key_file: files.keyFile }, ...extra });
}

/** Until every thread's `key` counter grew while one `round` of requests ran (retried round by round). */
export async function overEveryThread(app: TestApp, key: 'served' | 'forwarded' | 'handled', round: () => Promise<void>, what: string, threads = 2): Promise<void> {
  await waitFor(async () => {
    const before = await app.service.threads.stats();
    await round();
    const now = await app.service.threads.stats();
    return now.length === threads && now.every((s, i) => count(s, key) > count(before[i]!, key));
  }, { timeout: 30_000, what });
}

/** Requests a thread answered itself (`served`), passed to main (`forwarded`), or either (`handled`). */
function count(s: { served: number; forwarded: number }, key: 'served' | 'forwarded' | 'handled'): number {
  return key === 'handled' ? s.served + s.forwarded : s[key];
}
