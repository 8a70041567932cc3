// One workflow's life as the data-protection services see it: still running, ended, gone.
import { isGrpcServiceError, WorkflowNotFoundError, type Client } from '@temporalio/client';

/** gRPC's NOT_FOUND (status 5): the history is gone already (erased before, or past the namespace's retention). */
const grpcNotFound = 5;

/** Deletes a closed workflow's history from Temporal; false when there was none. */
export async function deleteHistory(temporal: Client, workflowId: string): Promise<boolean> {
  try {
    await temporal.workflowService.deleteWorkflowExecution({
      namespace: temporal.options.namespace,
      workflowExecution: { workflowId },
    });
    return true;
  } catch (error) {
    if (isGrpcServiceError(error) && Number(error.code) === grpcNotFound) return false;
    throw error;
  }
}

/** Whether the workflow is still running (a recovery that ended can still be writing back to the platform). */
export async function running(temporal: Client, workflowId: string): Promise<boolean> {
  try {
    return (await temporal.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/** Terminates a running workflow; false when it had ended meanwhile. */
export async function terminated(temporal: Client, workflowId: string, reason: string): Promise<boolean> {
  try {
    await temporal.workflow.getHandle(workflowId).terminate(reason);
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}
