import { describe, expect, it } from 'vitest';
import { buildFailure, goModMinimum, goProblem, goVersionMeets } from '../scripts/toolchain-checks.js';

// The toolchain step stops with one sentence when the Go found cannot build the Temporal CLI or FerretDB
// (a build with GOTOOLCHAIN=local and an older Go otherwise dies in the middle of compiling), and with one
// line naming the command when a build fails.

describe('goVersionMeets: `go env GOVERSION` against a go.mod `go` line', () => {
  it.each([
    ['go1.25.0', '1.25.0', true],
    ['go1.26.8', '1.25.0', true],
    ['go1.25.3', '1.25.0', true],
    ['go1.24.11', '1.25.0', false],
    ['go1.25rc2', '1.25.0', false],
    ['go1.25rc2', '1.25', true],
    ['go1.24.0', '1.24', true],
    ['go1.23.9', '1.24', false],
    ['go2.0.0', '1.25.0', true],
    ['go1.26.8 X:nocoverageredesign', '1.25.0', true],
    ['devel go1.27-0123abcd Tue Jan 6 2026', '1.25.0', true],
    ['', '1.25.0', false],
    ['unknown', '1.24', false],
  ])('%j meets %s: %s', (reported, minimum, meets) => {
    expect(goVersionMeets(reported, minimum)).toBe(meets);
  });
});

describe('goModMinimum', () => {
  it('reads the `go` line, not the toolchain line', () => {
    expect(goModMinimum('module local/ferretdb\n\ngo 1.24\n\ntoolchain go1.24.3\n')).toBe('1.24');
    expect(goModMinimum('module github.com/temporalio/cli\n\ngo 1.25.0\n')).toBe('1.25.0');
  });
});

describe('goProblem: the one sentence that stops the step', () => {
  const need = {
    minimum: '1.25.0',
    build: 'the Temporal CLI',
    instead: 'put a `temporal` binary on PATH',
  };

  it('is nothing when the Go found is new enough', () => {
    expect(goProblem('go1.25.0', need)).toBeNull();
  });

  it.each([
    ['go1.24.3', 'found go1.24.3'],
    [null, 'no `go` on PATH'],
    ['', '`go env GOVERSION` printed nothing'],
  ])('names what was found (%j), what is needed and the way around it', (reported, found) => {
    expect(goProblem(reported, need)).toBe(
      `Go 1.25.0 or newer is needed to build the Temporal CLI (${found}): install it (https://go.dev/doc/install) or put a \`temporal\` binary on PATH.`,
    );
  });
});

describe('buildFailure: the one line a failed build command ends the step with', () => {
  const command = ['go', 'install', '-ldflags', '-X main.Version=1.5.1', 'example.com/cmd@v1'];

  it('names the command (quoting arguments with spaces), its exit and where its output went', () => {
    expect(buildFailure(command, '/repo', { status: 1, signal: null })).toBe(
      "`go install -ldflags '-X main.Version=1.5.1' example.com/cmd@v1` exited with 1 in /repo; its output is above.",
    );
  });

  it('names the signal that killed it', () => {
    expect(buildFailure(['mvn', '-q'], '/repo', { status: null, signal: 'SIGKILL' })).toBe(
      '`mvn -q` was killed by SIGKILL in /repo; its output is above.',
    );
  });

  it('says the command could not be run at all, with no output to point at', () => {
    const error = new Error('spawnSync go ENOENT');
    expect(buildFailure(['go', 'build'], '/repo', { status: null, signal: null, error })).toBe(
      'could not run `go build` in /repo: spawnSync go ENOENT.',
    );
  });
});
