import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/*
 * How a user's secrets are kept (issue 49: "passwords stored hashed"). An API password, which a
 * person chooses, is a scrypt hash (N 16384, r 8, p 1: about 50 ms per check, so a guessed
 * password costs the guesser; the login throttle bounds the attempts). The service credentials
 * (Basic passwords of the file mounts, stream tokens, session tokens) are checked on every
 * connection and upload: a salted SHA-256, checked in microseconds; they are meant to be long
 * random keys (the README says so), which a fast hash does not weaken.
 */

/** Password checks at once (each holds a thread of the pool the file system shares for ~50 ms). */
export const MAX_CHECKS = 2;
/** Checks that may wait for their turn; more are refused at once (a flood of logins, from many addresses). */
export const MAX_WAITING = 256;

const N = 16384;
const R = 8;
const P = 1;
const KEYLEN = 32;

function derive(secret: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(secret, salt, KEYLEN, { N: n, r, p, maxmem: 256 * n * r }, (err, key) => (err ? reject(err) : resolve(key))));
}

/** `scrypt$N$r$p$salt$hash` (base64url) of a password. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

let running = 0;
const waiting: Array<() => void> = [];

/** Runs `fn` when one of the `MAX_CHECKS` turns is free; throws when `MAX_WAITING` wait already. */
async function inTurn<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= MAX_CHECKS) {
    if (waiting.length >= MAX_WAITING) throw new Error('too many logins at once; retry later');
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else running++;
  try {
    return await fn();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

/**
 * Whether `password` is the one `stored` was made of; false for anything malformed. At most
 * `MAX_CHECKS` run at once, `MAX_WAITING` wait (beyond: it throws, and the login is refused).
 */
export async function checkPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const want = Buffer.from(hash, 'base64url');
  if (want.length !== KEYLEN || Number(n) !== N || Number(r) !== R || Number(p) !== P) return false;
  return inTurn(async () => timingSafeEqual(await derive(password, Buffer.from(salt, 'base64url'), N, R, P), want));
}

/** `sha256$salt$hash` (base64url) of a service credential. */
export function hashKey(key: string): string {
  const salt = randomBytes(16);
  return `sha256$${salt.toString('base64url')}$${createHash('sha256').update(salt).update(key).digest('base64url')}`;
}

/** Whether `key` is the one `stored` was made of. */
export function checkKey(key: string, stored: string): boolean {
  const [kind, salt, hash] = stored.split('$');
  if (kind !== 'sha256' || salt === undefined || hash === undefined) return false;
  const got = createHash('sha256').update(Buffer.from(salt, 'base64url')).update(key).digest();
  const want = Buffer.from(hash, 'base64url');
  return want.length === got.length && timingSafeEqual(got, want);
}
