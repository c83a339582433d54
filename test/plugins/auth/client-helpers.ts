import { request } from 'node:http';

/** Real clients for the throttles: requests from a loopback address of their own, on fresh connections. */

export interface Answer { status: number; body: string }

/** One request from `localAddress` (127.0.0.x) on a connection of its own. */
export function from(base: string, localAddress: string, method: string, path: string,
  opts: { headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path, localAddress, agent: false, headers: { connection: 'close', ...opts.headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

export const basicHeader = (user: string, pass: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` });

/** How many of each status. */
export function tally(answers: readonly Answer[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const a of answers) out[a.status] = (out[a.status] ?? 0) + 1;
  return out;
}
