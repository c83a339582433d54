import { shortId } from '../../sdk/short-id.ts';

/** The base57 short UUIDs the reference uses for HLS session ids (see sdk/short-id.ts). */
const VALID = /^[23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz]{22}$/;

/** A random 22-character short UUID. */
export const newSessionId = shortId;

export const validSessionId = (s: string): boolean => VALID.test(s);
