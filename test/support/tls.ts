import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Files of a private test CA and of a server certificate it issued for 127.0.0.1 and localhost. */
export interface TestTls {
  caFile: string;
  certFile: string;
  keyFile: string;
  /** The CA bundle the test processes trust through NODE_EXTRA_CA_CERTS. */
  trustFile: string;
}

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * Issues a throwaway CA and a server certificate with openssl, for HTTPS webhook receivers in tests.
 * The trust file is the CA plus whatever NODE_EXTRA_CA_CERTS already named, so nothing is lost.
 */
export function createTestTls(dir: string): TestTls {
  const f = (name: string) => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    ['req', '-x509', ...ec, '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '2']
      .concat(['-subj', '/CN=Recoup test CA', '-addext', 'basicConstraints=critical,CA:TRUE'])
      .concat(['-addext', 'keyUsage=critical,keyCertSign,cRLSign']),
  );
  openssl(['req', ...ec, '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', '/CN=127.0.0.1']);
  writeFileSync(
    f('server.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n',
  );
  openssl(
    ['x509', '-req', '-in', f('server.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key')].concat([
      '-CAcreateserial',
      '-out',
      f('server.pem'),
      '-days',
      '2',
      '-extfile',
      f('server.ext'),
    ]),
  );
  const previous = process.env.NODE_EXTRA_CA_CERTS;
  const inherited = previous && existsSync(previous) ? readFileSync(previous, 'utf8') + '\n' : '';
  writeFileSync(f('trust.pem'), inherited + readFileSync(f('ca.pem'), 'utf8'));
  return {
    caFile: f('ca.pem'),
    certFile: f('server.pem'),
    keyFile: f('server.key'),
    trustFile: f('trust.pem'),
  };
}
