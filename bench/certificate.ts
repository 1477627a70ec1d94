// The TLS upstream's certificate, made when the bench starts: nothing is downloaded or kept.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

/**
 * A self-signed certificate for 127.0.0.1 in `dir` (removed with it after the run): the TLS upstream
 * serves it, and the floor, the load generator and the gateway trust it as their only CA.
 */
export function makeCertificate(dir: string): { cert: string; key: string } {
  const cert = path.join(dir, 'upstream-cert.pem');
  const key = path.join(dir, 'upstream-key.pem');
  const made = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { encoding: 'utf8' },
  );
  if (made.status !== 0) throw new Error(`openssl could not make the TLS upstream's certificate: ${made.error?.message ?? made.stderr}`);
  return { cert, key };
}
