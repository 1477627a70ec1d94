// Adversarial inputs for the DLP detectors, and a worker entry that times a policy on them. Each input
// is shaped to make a backtracking regex rescan: starts of a pattern whose end never comes (PEM BEGIN
// lines without END), long runs of what a pattern's body accepts (digits, domain labels, IBAN groups),
// and prefixes repeated so that every position is a candidate start.
import { parentPort, workerData } from 'node:worker_threads';
import { compilePolicy } from '../../plugins/dlp/redactor';
import type { DlpPolicyConfig } from '../../src/config/types';

const fill = (unit: string, size: number): string => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);

/** Input name → text of `size` characters. */
export function adversarialInputs(size: number): Record<string, string> {
  return {
    'unterminated PEM blocks': fill('-----BEGIN PRIVATE KEY-----\n', size),
    'unterminated PEM headers with key words': fill('-----BEGIN RSA ', size),
    'PEM blocks with one END at the very end': fill('-----BEGIN EC PRIVATE KEY-----\nMIIE\n', size - 30) + '-----END EC PRIVATE KEY-----\n',
    'long digit run': fill('1', size),
    'digits grouped by spaces': fill('4 ', size),
    'digits grouped by dashes': fill('4-', size),
    'plus-prefixed digit groups': fill('+1 ', size),
    'almost-emails (a@ repeated)': fill('a@', size),
    'almost-email with an endless domain': `x@${fill('a.', size - 2)}`,
    'almost-emails with dotted local parts': fill('a.b@c', size),
    'almost-emails with hyphenated domains': fill(' a@b-', size),
    'almost-IBANs (groups without end)': fill('DE89 3704 ', size),
    'almost-IBANs (letters)': fill('DE00AAAA', size),
    'secret key prefixes': fill('sk-', size),
    'bearer followed by spaces': `Bearer${' '.repeat(size - 6)}`,
    'secret names with = repeated': fill('token=', size),
    'secret names with spaces': fill('api_key ', size),
    'almost-JWTs': fill('eyJaaaaaaaaaa.', size),
    'letters without end (custom patterns)': fill('a', size),
  };
}

export interface TimingRequest {
  policy: DlpPolicyConfig;
  size: number;
}

/** Posted per input once the policy has redacted it. */
export interface Timing {
  input: string;
  ms: number;
}

if (parentPort && workerData) {
  const { policy, size } = workerData as TimingRequest;
  const redactor = compilePolicy(policy);
  if (!redactor) throw new Error('the policy detects nothing');
  for (const [input, text] of Object.entries(adversarialInputs(size))) {
    parentPort.postMessage({ input, ms: -1 } satisfies Timing); // started: the parent's deadline runs from here
    const started = process.hrtime.bigint();
    redactor.redact(text);
    parentPort.postMessage({ input, ms: Number(process.hrtime.bigint() - started) / 1e6 } satisfies Timing);
  }
}
