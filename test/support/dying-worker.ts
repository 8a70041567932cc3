import { runWorkerProcess } from '../../worker/worker-process.js';

// The production worker process, but it dies (SIGKILL, nothing flushed, no task completed) right after it
// has published the first event named in DIE_AFTER_EVENT: a worker lost between writing an ending's events
// and completing the workflow task that wrote them.

const dieAfter = process.env.DIE_AFTER_EVENT;
if (!dieAfter) throw new Error('DIE_AFTER_EVENT names the event after which the worker dies');

await runWorkerProcess({
  activities: (made) => ({
    ...made,
    async emitEvent(input) {
      await made.emitEvent(input);
      if (input.payload.event === dieAfter) process.kill(process.pid, 'SIGKILL');
    },
  }),
});
