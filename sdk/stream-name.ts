// The one rule for the stream names clients send, whatever the protocol.

// why a client's stream name is refused: each would let two spellings name one stream, or reach
// logs and file names of processes reading the stream in a form that misleads (the SRT host's
// `ValidName`, in C++, is the same rule)
const NAME_RULES: Array<[RegExp, string]> = [
  [/[\u0000-\u001f\u007f]/, 'control characters'],
  [/(^|\/)\.{1,2}(\/|$)/, "a '.' or '..' path segment"],
  [/\s/, 'whitespace'],
  [/[\\#]/, "a backslash or '#'"],
];
/** What every name the stream table keeps must be, the service's own publishers' too (the first rule). */
const KEPT_RULES = NAME_RULES.slice(0, 1);

/** The longest stream name (the stream table's bound for every publisher). */
const MAX_NAME = 1024;

/**
 * Why a stream name a client sent (RTMP, SRT, WHIP/WHEP; without its leading `/`) is refused, or
 * undefined: over 1,024 characters, control characters, whitespace, a backslash or `#`, a `.` or
 * `..` segment. `kept`: only what the stream table asks of every name it keeps, the service's own
 * publishers' too (at most 1,024 characters, no control characters; a process's id may hold a
 * space): the table applies this one rule, the whole of it to its clients.
 *
 * @example
 * streamNameProblem('live/..'); // "a '.' or '..' path segment"
 * streamNameProblem('live/cam'); // undefined
 * streamNameProblem('my cam', { kept: true }); // undefined: an internal publisher's name
 */
export function streamNameProblem(name: string, o?: { kept?: boolean }): string | undefined {
  if (name.length > MAX_NAME) return `longer than ${MAX_NAME} characters`;
  for (const [rule, what] of o?.kept ? KEPT_RULES : NAME_RULES) if (rule.test(name)) return what;
  return undefined;
}
