import { isGrpcServiceError, type Client } from '@temporalio/client';

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
