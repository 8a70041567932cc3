import { ConfigurationError } from '../runtime/configuration-error.js';
import { errorLine } from '../runtime/error-line.js';
import { runWorkerProcess } from './worker-process.js';

// The worker process (`npm run worker`): see runWorkerProcess.
runWorkerProcess().catch((error: unknown) => {
  // What the operator must fix is told in one line; anything else keeps its stack for whoever debugs it.
  console.error(error instanceof ConfigurationError ? errorLine(error) : error);
  process.exit(1);
});
