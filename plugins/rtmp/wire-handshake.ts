import { createHmac, randomBytes } from 'node:crypto';

/*
 * The server side of the RTMP handshake: S0, S1 and S2 for a client's C1. A client that signs C1
 * (the "complex" handshake of Flash Player and of ffmpeg) gets a signed S1 and an S2 that answers
 * its digest; any other gets C1 echoed (the simple handshake). The keys are the well-known ones
 * of the format.
 */

/** Bytes of C1, C2, S1 and S2. */
export const HANDSHAKE_SIZE = 1536;
const DIGEST = 32;

const FP_KEY = Buffer.from('Genuine Adobe Flash Player 001');
const FMS_KEY = Buffer.from('Genuine Adobe Flash Media Server 001');
const CRUD = Buffer.from('f0eec24a8068bee82e00d0d1029e7e576eec5d2d29806fab93b8e636cfeb31ae', 'hex');
const FMS_KEY_FULL = Buffer.concat([FMS_KEY, CRUD]);

const hmac = (key: Buffer, data: Buffer): Buffer => createHmac('sha256', key).update(data).digest();

/** Where a digest sits: scheme 1 reads its offset at bytes 8-11, scheme 2 at 772-775. */
function digestAt(sig: Buffer, scheme: 1 | 2): number {
  const base = scheme === 1 ? 8 : 772;
  const sum = sig[base]! + sig[base + 1]! + sig[base + 2]! + sig[base + 3]!;
  return (sum % 728) + (scheme === 1 ? 12 : 776);
}

/** The signature without the 32 digest bytes at `at`. */
function withoutDigest(sig: Buffer, at: number): Buffer {
  return Buffer.concat([sig.subarray(0, at), sig.subarray(at + DIGEST)]);
}

/** The scheme a client signed its C1 with, or 0 for an unsigned (simple) C1. */
function schemeOf(c1: Buffer): 0 | 1 | 2 {
  for (const scheme of [2, 1] as const) {
    const at = digestAt(c1, scheme);
    if (hmac(FP_KEY, withoutDigest(c1, at)).equals(c1.subarray(at, at + DIGEST))) return scheme;
  }
  return 0;
}

/** S0 (version 3), S1 and S2 for a client's C1. */
export function serverHandshake(c1: Buffer): Buffer {
  const version = Buffer.from([3]);
  const scheme = schemeOf(c1);
  if (scheme === 0) return Buffer.concat([version, c1, c1]);
  const s1 = Buffer.concat([Buffer.from([0, 0, 0, 0, 1, 2, 3, 4]), randomBytes(HANDSHAKE_SIZE - 8)]);
  const at = digestAt(s1, scheme);
  hmac(FMS_KEY, withoutDigest(s1, at)).copy(s1, at);
  const challengeAt = digestAt(c1, scheme);
  const key = hmac(FMS_KEY_FULL, c1.subarray(challengeAt, challengeAt + DIGEST));
  const random = randomBytes(HANDSHAKE_SIZE - DIGEST);
  return Buffer.concat([version, s1, random, hmac(key, random)]);
}
