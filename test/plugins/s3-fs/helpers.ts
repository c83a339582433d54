import { startApp, type TestApp, type TestLike } from '../../helpers/app.ts';
import { s3Entry, startS3, type S3Target } from '../../helpers/s3.ts';

export const S3_USER = 'uploader';
export const S3_PASS = 'pw:ä/@';

/** `Authorization` for the S3 mount's own Basic auth. */
export function s3Basic(user = S3_USER, pass = S3_PASS): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` };
}

/** The service with one S3 filesystem `cloud` at `/cloud` (writes behind S3_USER/S3_PASS) on the test's store. */
export async function startS3App(t: TestLike, over: Record<string, unknown> = {}): Promise<{ app: TestApp; s3: S3Target }> {
  const s3 = await startS3(t);
  const entry = s3Entry(s3, { auth: { enable: true, username: S3_USER, password: S3_PASS }, ...over });
  const app = await startApp(t, {
    config: { plugins: ['auth', 'disk-fs', 'memfs', 's3-fs', 'metrics'], metrics: { enable: true, interval_sec: 1, range_sec: 10 }, storage: { s3: [entry] } },
  });
  return { app, s3 };
}
