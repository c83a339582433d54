import { S3Client } from '@aws-sdk/client-s3';
import { isApiError, type ApiError } from '../../sdk/index.ts';
import { s3Errors } from './errors.ts';
import type { S3FsEntry } from './schema.ts';

/** Deadlines of one S3 call (documented in the README). */
export const TIMEOUTS = {
  /** TCP/TLS connect. */
  connectMs: 3_000,
  /** HEAD, DELETE, one listing page, a small PUT, a GET until its headers. */
  callMs: 10_000,
};

/** The S3 client of one entry: path-style addressing for self-hosted stores, one attempt per call (the plugin retries). */
export function createClient(s: S3FsEntry): S3Client {
  const endpoint = s.endpoint ? `${s.use_ssl ? 'https' : 'http'}://${s.endpoint}` : undefined;
  return new S3Client({
    endpoint,
    region: s.region || 'us-east-1',
    // AWS itself takes virtual-hosted requests; every other store (and AWS too) takes path-style
    forcePathStyle: Boolean(endpoint) && !/amazonaws\.com$/i.test(s.endpoint),
    credentials: { accessKeyId: s.access_key_id, secretAccessKey: s.secret_access_key },
    maxAttempts: 1,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { connectionTimeout: TIMEOUTS.connectMs, requestTimeout: TIMEOUTS.callMs },
  });
}

interface SdkError { name?: string; code?: string; $metadata?: { httpStatusCode?: number } }

/** The HTTP status S3 answered with, if it answered. */
export function statusOf(err: unknown): number | undefined {
  return (err as SdkError | undefined)?.$metadata?.httpStatusCode;
}

/** True when S3 said the object (or bucket) is not there. */
export function isNotFound(err: unknown): boolean {
  const e = err as SdkError;
  return statusOf(err) === 404 || e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.name === 'NoSuchBucket';
}

/** True for failures worth a retry: no answer, a timeout, a 5xx, throttling, a bucket not created yet. */
export function isTransient(err: unknown): boolean {
  if ((err as SdkError | undefined)?.name === 'NoSuchBucket') return true;
  const s = statusOf(err);
  if (s === undefined) return true;
  return s >= 500 || s === 429 || s === 408;
}

/** An SDK failure as the interface's error, with a stable code. */
export function apiErrorOf(fs: string, what: string, err: unknown): ApiError {
  if (isApiError(err)) return err;
  const e = err as SdkError & { message?: string };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError' || e?.code === 'ETIMEDOUT') return s3Errors.timeout(fs, what);
  const s = statusOf(err);
  if (s !== undefined && s < 500 && s !== 429 && s !== 408) return s3Errors.denied(fs, `${what}: ${s} ${e?.name ?? ''}`.trim());
  return s3Errors.unavailable(fs, `${what}: ${e?.code ?? e?.name ?? e?.message ?? 'no answer'}`);
}

/** An abort signal that fires after `ms` (a deadline of one call, whatever the SDK does). */
export function deadline(ms = TIMEOUTS.callMs): AbortSignal {
  return AbortSignal.timeout(ms);
}
