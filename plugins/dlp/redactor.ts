// Compiles an organization's DLP policy into a Redactor once, at boot. redact() runs every rule over
// the text, keeps the non-overlapping spans (earliest first, longest on a tie) and replaces each with
// `[REDACTED:<detector>]`. No regex is built per call.
import type { DlpPolicyConfig } from '../../src/config/types';
import type { Redactor } from '../../src/pipeline/context';
import { customDetector, DETECTORS, type Detector, type DetectorRule } from './detectors';

interface CompiledRule {
  readonly rule: DetectorRule;
  readonly replacement: string;
}

interface Span {
  start: number;
  end: number;
  replacement: string;
}

const HAS_DIGIT = /\d/;

function findSpans(rules: readonly CompiledRule[], text: string): Span[] {
  const spans: Span[] = [];
  let hasDigit: boolean | undefined;
  let hasAt: boolean | undefined;
  for (const { rule, replacement } of rules) {
    if (rule.needs === 'digit' && !(hasDigit ??= HAS_DIGIT.test(text))) continue;
    if (rule.needs === 'at' && !(hasAt ??= text.includes('@'))) continue;
    const pattern = rule.pattern;
    pattern.lastIndex = 0;
    for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
      if (m[0].length === 0) {
        pattern.lastIndex++; // a custom pattern matching the empty string must not loop forever
        continue;
      }
      let start = m.index;
      let value = m[0];
      if (rule.group !== undefined) {
        const at = m.indices?.[rule.group];
        const group = m[rule.group];
        if (!at || group === undefined) continue;
        start = at[0];
        value = group;
      }
      const length = rule.check ? rule.check(m, value) : value.length;
      if (length > 0) spans.push({ start, end: start + length, replacement });
    }
  }
  return spans;
}

class PolicyRedactor implements Redactor {
  constructor(private readonly rules: readonly CompiledRule[]) {}

  redact(text: string): { text: string; count: number } {
    if (text.length === 0) return { text, count: 0 };
    const spans = findSpans(this.rules, text);
    if (spans.length === 0) return { text, count: 0 };
    spans.sort((a, b) => a.start - b.start || b.end - a.end);
    let out = '';
    let cursor = 0;
    let count = 0;
    for (const span of spans) {
      if (span.start < cursor) continue; // overlaps a span already replaced
      out += text.slice(cursor, span.start) + span.replacement;
      cursor = span.end;
      count++;
    }
    return { text: out + text.slice(cursor), count };
  }
}

/** The policy an organization gets when its config has no `dlp` block: every built-in detector. */
export const DEFAULT_POLICY: DlpPolicyConfig = {
  enabled: true,
  detectors: ['email', 'credit_card', 'us_ssn', 'iban', 'phone', 'secret_key'],
  custom: [],
};

/** The redactor of a policy, or null when the policy is off or detects nothing. */
export function compilePolicy(policy: DlpPolicyConfig): Redactor | null {
  if (!policy.enabled) return null;
  const detectors: Detector[] = [...policy.detectors.map((name) => DETECTORS[name]), ...policy.custom.map((c) => customDetector(c.name, c.pattern))];
  // Each redactor owns its RegExp objects (their lastIndex is state), so rules are cloned per policy.
  const rules: CompiledRule[] = detectors.flatMap((d) =>
    d.rules.map((rule) => ({ rule: { ...rule, pattern: new RegExp(rule.pattern.source, rule.pattern.flags) }, replacement: `[REDACTED:${d.name}]` })),
  );
  return rules.length === 0 ? null : new PolicyRedactor(rules);
}
