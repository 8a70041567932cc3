/**
 * The toolchain step's decisions, as pure functions: whether the Go found can build what needs it, and the
 * one line that says so, or that says which build command failed.
 */

/** A Go version as numbers; a release candidate or beta sorts before its `.0` (go1.25rc1 < go1.25.0). */
type GoVersion = [major: number, minor: number, patch: number];

/**
 * Reads `go env GOVERSION` (go1.25.3, go1.26rc1, devel go1.27-…) or a go.mod `go` line (1.24, 1.25.0);
 * `bare` is the patch of a version written without one (a go.mod's `1.24` is met by any release of 1.24).
 */
function parseGoVersion(text: string, bare: number): GoVersion | null {
  const m = /(?:^|go)(\d+)\.(\d+)(?:\.(\d+)|(rc|beta))?/.exec(text.trim());
  if (!m) return null;
  const patch = m[3] !== undefined ? Number(m[3]) : m[4] ? -1 : bare;
  return [Number(m[1]), Number(m[2]), patch];
}

/** Whether the Go that reported `reported` (`go env GOVERSION`) is `minimum` (a go.mod `go` line) or newer. */
export function goVersionMeets(reported: string, minimum: string): boolean {
  const found = parseGoVersion(reported, 0);
  const needed = parseGoVersion(minimum, -1);
  if (!found || !needed) return false;
  return (found[0] - needed[0] || found[1] - needed[1] || found[2] - needed[2]) >= 0;
}

/** The `go` line of a go.mod: the oldest Go that builds the module. */
export function goModMinimum(goMod: string): string {
  const m = /^go\s+(\S+)\s*$/m.exec(goMod);
  if (!m?.[1]) throw new Error('go.mod has no `go` line');
  return m[1];
}

/** What a build needs Go for, and what the operator can do instead of installing it. */
export interface GoNeed {
  minimum: string;
  build: string;
  instead: string;
}

/**
 * The sentence that stops the toolchain step when the Go found (`go env GOVERSION`, null when `go` could not
 * be run) cannot build `need.build`; null when it can.
 */
export function goProblem(reported: string | null, need: GoNeed): string | null {
  if (reported !== null && goVersionMeets(reported, need.minimum)) return null;
  const found =
    reported === null
      ? 'no `go` on PATH'
      : reported
        ? `found ${reported}`
        : '`go env GOVERSION` printed nothing';
  return `Go ${need.minimum} or newer is needed to build ${need.build} (${found}): install it (https://go.dev/doc/install) or ${need.instead}.`;
}

/** How a build command ended, as node's spawnSync reports it. */
export interface CommandOutcome {
  status: number | null;
  signal: string | null;
  error?: Error;
}

/** The line that stops the toolchain step when a build command failed: which one, where, and its output. */
export function buildFailure(command: string[], cwd: string, outcome: CommandOutcome): string {
  const shown = command.map((arg) => (/\s/.test(arg) ? `'${arg}'` : arg)).join(' ');
  if (outcome.error) return `could not run \`${shown}\` in ${cwd}: ${outcome.error.message}.`;
  const how = outcome.signal ? `was killed by ${outcome.signal}` : `exited with ${outcome.status}`;
  return `\`${shown}\` ${how} in ${cwd}; its output is above.`;
}
