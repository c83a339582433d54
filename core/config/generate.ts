import { randomBytes, randomUUID, randomInt } from 'node:crypto';

/* Random defaults that are created once and persisted in the config file (reference 6.2). */

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const SECRET = ALNUM + '!#%&()*+,-./:;<=>?@[]^_{|}~';
const ADJECTIVES = ['amazing', 'bold', 'calm', 'clever', 'eager', 'fancy', 'gentle', 'happy', 'jolly', 'lucky', 'mighty', 'proud', 'quick', 'super', 'witty'];
const NOUNS = ['badger', 'cat', 'dolphin', 'eagle', 'falcon', 'frog', 'heron', 'koala', 'lynx', 'otter', 'panda', 'raven', 'tiger', 'wolf', 'zebra'];

export function randomString(n: number, alphabet = ALNUM): string {
  const bytes = randomBytes(n);
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[bytes[i]! % alphabet.length];
  return s;
}

/** Paths filled with a random value when the stored config does not have them. */
export const GENERATED: Record<string, () => string> = {
  id: () => randomUUID(),
  name: () => `${ADJECTIVES[randomInt(ADJECTIVES.length)]}-${NOUNS[randomInt(NOUNS.length)]}-${randomInt(1000, 10000)}`,
  'api.auth.jwt.secret': () => randomString(32, SECRET),
  'storage.memory.auth.password': () => randomString(18),
};
