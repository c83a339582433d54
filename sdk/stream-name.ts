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

/** The longest stream name (the stream table's bound for every publisher). */
const MAX_NAME = 1024;

/**
 * Why a stream name a client sent (RTMP, SRT, WHIP/WHEP; without its leading `/`) is refused, or
 * undefined: over 1,024 characters, control characters, whitespace, a backslash or `#`, a `.` or
 * `..` segment.
 *
 * @example
 * streamNameProblem('live/..'); // "a '.' or '..' path segment"
 * streamNameProblem('live/cam'); // undefined
 */
export function streamNameProblem(name: string): string | undefined {
  if (name.length > MAX_NAME) return `longer than ${MAX_NAME} characters`;
  for (const [rule, what] of NAME_RULES) if (rule.test(name)) return what;
  return undefined;
}
