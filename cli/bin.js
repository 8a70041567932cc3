#!/usr/bin/env node
// The `recoup` executable: registers tsx (a runtime dependency) and runs the TypeScript CLI in this
// process, so arguments, stdio, signals and the exit code are the CLI's own.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
