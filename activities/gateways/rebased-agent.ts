import type { ClientRequestArgs } from 'node:http';
import { Agent } from 'node:https';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect, type ConnectionOptions } from 'node:tls';

/**
 * Connects an SDK's requests to another HTTPS host, for SDKs whose base URL is fixed to their gateway's and
 * whose one network option is the agent (GoCardless, PayPal): a proxy, or an emulator in tests. The
 * certificate is checked against the new host. No idle connections are kept: a client is built per activity.
 */
export class RebasedAgent extends Agent {
  constructor(private readonly base: URL) {
    super();
  }

  // Like https.Agent's own: the socket is returned at once (the callback is for agents that connect later).
  override createConnection(options: ClientRequestArgs): Duplex {
    const host = this.base.hostname;
    return connect({
      ...(options as ConnectionOptions),
      host,
      port: Number(this.base.port || 443),
      servername: isIP(host) ? undefined : host,
    });
  }
}
