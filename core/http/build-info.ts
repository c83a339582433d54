import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { fileURLToPath } from 'node:url';

export interface BuildInfo { commit: string; branch: string; date: string; version: string }

let cached: BuildInfo | undefined;
let loading: Promise<BuildInfo> | undefined;
const root = () => fileURLToPath(new URL('../../', import.meta.url));
const GIT = { encoding: 'utf8', timeout: 2000 } as const;

function packageVersion(): string {
  try { return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version; } catch { return ''; }
}

/**
 * The build's own identity: package version and, in a git checkout, commit, branch and commit
 * date. Read by one run of `git` in the background (the event loop free meanwhile): the
 * synchronous runs it replaced were three, and the first answer of `GET /api` waited for them
 * (issue 29); the two parallel runs that followed cost the start-up a fork each (issue 46.4).
 * Start it early; every later call gets the same promise.
 */
export function loadBuildInfo(): Promise<BuildInfo> {
  loading ??= cached ? Promise.resolve(cached) : (async () => {
    const git = (...args: string[]) => new Promise<string>((resolve) => {
      execFile('git', args, { ...GIT, cwd: root() }, (err, out) => resolve(err ? '' : String(out).trim()));
    });
    cached ??= { ...fromLog(await git(...LOG)), version: packageVersion() };
    return cached;
  })();
  return loading;
}

/** Commit, commit date and the ref names of HEAD, in one run (short names whatever `log.decorate` says). */
const LOG = ['log', '-1', '--decorate=short', '--format=%H%n%cI%n%D'];

/**
 * What `git log` printed: the branch is the one HEAD points to (`HEAD -> name` among the ref
 * names), else `HEAD` as `git rev-parse --abbrev-ref HEAD` prints for a detached HEAD; all empty
 * when git failed (not a checkout, no git, no commit yet).
 */
export function fromLog(out: string): { commit: string; branch: string; date: string } {
  const [commit = '', date = '', refs = ''] = out.split('\n');
  if (!commit) return { commit: '', branch: '', date: '' };
  return { commit, date, branch: /^HEAD -> ([^,]+)/.exec(refs)?.[1] ?? 'HEAD' };
}

/** The build's identity now: what `loadBuildInfo` read, or read at once when it has not finished. */
export function buildInfo(): BuildInfo {
  if (cached) return cached;
  const git = (...args: string[]) => {
    try { return execFileSync('git', args, { ...GIT, cwd: root(), stdio: ['ignore', 'pipe', 'ignore'] }).trim(); } catch { return ''; }
  };
  cached = { ...fromLog(git(...LOG)), version: packageVersion() };
  return cached;
}

/** Node's names for CPU architectures that Go (GOARCH) spells differently. */
const GO_ARCH: Record<string, string> = { x64: 'amd64', ia32: '386', arm: 'arm', arm64: 'arm64', ppc64: 'ppc64le', s390x: 's390x', mips: 'mips', mipsel: 'mipsle', loong64: 'loong64', riscv64: 'riscv64' };

/** `os/arch` as Go prints it (`linux/amd64`): the reference's clients and UI show this string. */
export function goArch(os: string = platform(), cpu: string = arch()): string {
  return `${os === 'win32' ? 'windows' : os}/${GO_ARCH[cpu] ?? cpu}`;
}
