import { placeholdersRef, runCredentialsRef, type PlaceholderRegistry, type RunCredentials, type PlaceholderSection } from '../../sdk/index.ts';
import type { TestApp, TestLike } from './app.ts';

/**
 * A placeholder as the engine resolves it for a run of process `processId` that uses it with
 * `rest` after it (`{memfs}` + `/live/x.m3u8`): the run's credential in the value, the run bound
 * to the whole text (what the engine does before each spawn) and revoked at teardown. For tests
 * that start ffmpeg themselves with what a process would get.
 */
export function runUrl(t: TestLike, app: TestApp, placeholder: string, rest: string, o: { section?: PlaceholderSection; processId?: string } = {}): string {
  const services = app.service.app.kernel.services;
  const run = (services.resolve(runCredentialsRef) as RunCredentials).issue(o.processId ?? 'p');
  t.teardown(() => run.revoke());
  const section = o.section ?? 'output';
  const text = (services.resolve(placeholdersRef) as PlaceholderRegistry).get(placeholder)!.value(section, run) + rest;
  run.bind([{ section, text }]);
  return text;
}
