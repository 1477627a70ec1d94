// The built-in detectors: each is a set of rules (mostly a global regex, optionally the capture group
// to replace, and a check of the match). Regexes find candidates; checks (Luhn, mod 97, SSA rules,
// entropy) decide, so order numbers, dates, versions and UUIDs stay untouched.
//
// Every rule runs in time linear in the text (test/plugins/dlp-linear-time.test.ts feeds each one
// 1 MiB of adversarial input): each regex is anchored on a literal or bounded at every repetition that
// a failed attempt could rescan, and the one construct that cannot be (a PEM block, whose end may be
// anywhere or nowhere) is a hand-written scan. Custom patterns run on RE2 (src/config/dlp-pattern.ts).
import { compileDlpPattern } from '../../src/config/dlp-pattern';
import type { DlpDetector } from '../../src/config/types';
import { cardIssuerValid, ibanValid, luhnValid, shannonEntropy, ssnValid } from './checksums';

export interface DetectorRule {
  /** Only run the rule when the text could contain a match (it has a digit or an '@'). */
  readonly needs?: 'digit' | 'at';
  /** Calls `found` for every accepted span of `text`; runs in time linear in the text. */
  scan(text: string, found: (start: number, end: number) => void): void;
}

interface RegexRuleSpec {
  /** Global ('g'); with the 'd' flag when `group` is set. */
  readonly pattern: RegExp;
  /** Replace only this capture group (e.g. the value of `api_key=...`), not the whole match. */
  readonly group?: number;
  readonly needs?: 'digit' | 'at';
  /** Length of the accepted prefix of the (group) match, 0 to reject it. */
  readonly check?: (match: RegExpExecArray, value: string) => number;
}

/**
 * A rule from a regex. The RegExp is shared by every policy that uses the rule: redaction is
 * synchronous, so its lastIndex (reset on each scan) is never seen by two scans at once.
 */
function regexRule(spec: RegexRuleSpec): DetectorRule {
  const { pattern, group, check } = spec;
  return {
    ...(spec.needs ? { needs: spec.needs } : {}),
    scan(text, found) {
      pattern.lastIndex = 0;
      for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
        let start = m.index;
        let value = m[0];
        if (group !== undefined) {
          const at = m.indices?.[group];
          const captured = m[group];
          if (!at || captured === undefined) continue;
          start = at[0];
          value = captured;
        }
        const length = check ? check(m, value) : value.length;
        if (length > 0) found(start, start + length);
      }
    },
  };
}

const PEM_BEGIN = /-----BEGIN (?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----/g;
const PEM_END = /-----END (?:[A-Z0-9]{1,20} ){0,3}PRIVATE KEY(?: BLOCK)?-----/g;
/** The lines of base64 (and blank lines) after a BEGIN line, sticky from where it is set. */
const PEM_BODY = /(?:[A-Za-z0-9+/=]*(?:\r?\n|$))*/y;

/**
 * PEM private keys: BEGIN line to END line. A lazy `BEGIN[\s\S]*?END` regex rescans to the end of the
 * text for every BEGIN without an END (quadratic: 2 MB took ~10 s). Here the END is searched for once
 * per BEGIN from where the last search ended, and once no END is left none is searched for again; an
 * unterminated block loses its BEGIN line and the key body that follows it.
 */
const pemPrivateKey: DetectorRule = {
  scan(text, found) {
    let endLeft = true;
    PEM_BEGIN.lastIndex = 0;
    for (let begin = PEM_BEGIN.exec(text); begin !== null; begin = PEM_BEGIN.exec(text)) {
      const headerEnd = begin.index + begin[0].length;
      let end = -1;
      if (endLeft) {
        PEM_END.lastIndex = headerEnd;
        const match = PEM_END.exec(text);
        if (match) end = match.index + match[0].length;
        else endLeft = false;
      }
      if (end < 0) {
        PEM_BODY.lastIndex = headerEnd;
        PEM_BODY.exec(text);
        end = PEM_BODY.lastIndex;
      }
      found(begin.index, end);
      PEM_BEGIN.lastIndex = end;
    }
  },
};

export interface Detector {
  /** Label in the replacement `[REDACTED:<name>]`. */
  readonly name: string;
  readonly rules: readonly DetectorRule[];
}

const digitsOf = (value: string): string => value.replace(/\D/g, '');

/** Separators of a card number must be consistent and group it the way cards are printed. */
function cardGrouping(value: string): boolean {
  const separators = value.match(/[ -]/g);
  if (!separators) return true;
  if (separators.some((s) => s !== separators[0])) return false;
  const groups = value.split(separators[0] as string).map((g) => g.length);
  const shape = groups.join('-');
  if (shape === '4-6-5' || shape === '4-6-4') return true; // Amex, Diners
  return groups.every((len, i) => (i === groups.length - 1 ? len >= 1 && len <= 4 : len === 4));
}

/** A token rather than a word: mixed letters and digits with some randomness, or very random. */
export function looksRandom(value: string): boolean {
  const entropy = shannonEntropy(value);
  const hasDigit = /\d/.test(value);
  const hasLetter = /[A-Za-z]/.test(value);
  return (hasDigit && hasLetter && entropy >= 3) || entropy >= 4.2;
}

export const DETECTORS: Readonly<Record<DlpDetector, Detector>> = {
  email: {
    name: 'email',
    rules: [
      regexRule({
        pattern:
          /(?<![\w.%+-])[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![\w-])/g,
        needs: 'at',
      }),
    ],
  },
  credit_card: {
    name: 'credit_card',
    rules: [
      regexRule({
        // 12-19 digits, optionally grouped by spaces or dashes; not part of a longer number or id.
        pattern: /(?<!\w|\w[-.])\d(?:[ -]?\d){11,18}(?!\w|[-.]\w)/g,
        needs: 'digit',
        check: (_m, value) => {
          const digits = digitsOf(value);
          return cardGrouping(value) && cardIssuerValid(digits) && luhnValid(digits) ? value.length : 0;
        },
      }),
    ],
  },
  us_ssn: {
    name: 'us_ssn',
    rules: [
      regexRule({
        // AAA-GG-SSSS (dashes or spaces, used consistently); a bare 9-digit run is too often something else.
        pattern: /(?<!\w|\w[-.])(\d{3})([- ])(\d{2})\2(\d{4})(?!\w|[-.]\w)/g,
        needs: 'digit',
        check: (m, value) => (ssnValid(m[1] as string, m[3] as string, m[4] as string) ? value.length : 0),
      }),
    ],
  },
  iban: {
    name: 'iban',
    rules: [
      regexRule({
        pattern: /(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{4}){2,7}(?: ?[A-Za-z0-9]{1,3})?(?![A-Za-z0-9])/g,
        needs: 'digit',
        check: (_m, value) => {
          // The regex may swallow a trailing word group: try the longest prefix ending on a group boundary.
          for (let end = value.length; end >= 15; end--) {
            if (end < value.length && value[end] !== ' ') continue;
            const candidate = value.slice(0, end);
            if (ibanValid(candidate.replace(/ /g, ''))) return end;
          }
          return 0;
        },
      }),
    ],
  },
  phone: {
    name: 'phone',
    rules: [
      regexRule({
        // International (E.164 with optional grouping): "+" and 8-15 digits, groups separated by space, dot or dash.
        pattern: /(?<![\w+])\+[1-9]\d{0,3}(?:[ .-]?\((?:\d{1,4})\)\d{0,4}|[ .-]\d{1,8}){1,6}(?![\w]|[-.]\d)|(?<![\w+])\+[1-9]\d{7,14}(?!\w)/g,
        needs: 'digit',
        check: (_m, value) => {
          const digits = digitsOf(value).length;
          return digits >= 8 && digits <= 15 ? value.length : 0;
        },
      }),
      regexRule({
        // North American (NANP): area and exchange codes start with 2-9; separators required.
        pattern: /(?<![\w+\-.(])(?:1[-. ])?(?:\([2-9]\d{2}\) ?|[2-9]\d{2}[-. ])[2-9]\d{2}[-. ]\d{4}(?!\w|[-.]\d)/g,
        needs: 'digit',
      }),
    ],
  },
  secret_key: {
    name: 'secret_key',
    rules: [
      pemPrivateKey,
      regexRule({
        // OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-) and Anthropic (sk-ant-...) keys.
        pattern: /(?<![\w-])sk-(?:ant-[a-z0-9]+-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g,
        check: (_m, value) => (/\d/.test(value) && shannonEntropy(value) >= 3.5 ? value.length : 0),
      }),
      // AWS access key ids (IAM user, temporary, role, group... prefixes).
      regexRule({ pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}(?![A-Za-z0-9])/g }),
      // GitHub personal, OAuth, user-to-server, server-to-server, refresh and fine-grained tokens.
      regexRule({ pattern: /(?<!\w)(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?!\w)/g }),
      // Slack bot, user, app and refresh tokens.
      regexRule({ pattern: /(?<!\w)xox[abposre]-[A-Za-z0-9-]{10,}/g }),
      // Stripe secret and restricted keys.
      regexRule({ pattern: /(?<!\w)(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g }),
      // Google API keys.
      regexRule({ pattern: /(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])/g }),
      // JSON Web Tokens (header.payload.signature, both JSON parts base64url of '{"').
      regexRule({ pattern: /(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g }),
      regexRule({
        // Bearer credentials (RFC 6750 b64token): replace the token, keep the scheme word.
        pattern: /\b(?:Bearer|Token) +([A-Za-z0-9._~+/-]{16,}=*)/dg,
        group: 1,
        check: (_m, value) => (looksRandom(value) ? value.length : 0),
      }),
      regexRule({
        // Generic `name=value` / `"name": "value"` where the name says secret and the value looks random.
        pattern:
          /(?:api[_-]?key|apikey|secret(?:[_-]?key)?|access[_-]?key(?:[_-]?id)?|auth[_-]?token|access[_-]?token|refresh[_-]?token|token|password|passwd|client[_-]?secret|private[_-]?key|credentials?)["']?\s*[:=]\s*["']?([^\s"'`,;<>()[\]{}]{12,})/dgi,
        group: 1,
        check: (_m, value) => (looksRandom(value) ? value.length : 0),
      }),
    ],
  },
};

/**
 * A custom pattern from the organization's policy; its name is the label. It runs on RE2 (linear time
 * whatever the pattern), so an operator's pattern cannot stall every tenant.
 */
export function customDetector(name: string, pattern: string): Detector {
  const re2 = compileDlpPattern(pattern);
  return {
    name,
    rules: [
      {
        scan(text, found) {
          const matcher = re2.matcher(text);
          while (matcher.find()) {
            const start = matcher.start();
            const end = matcher.end();
            if (end > start) found(start, end); // a pattern matching the empty string redacts nothing
          }
        },
      },
    ],
  };
}
