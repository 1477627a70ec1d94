// Compiles an organization's DLP policy into a Redactor once, at boot. redact() runs every rule over
// the text, keeps the non-overlapping spans (earliest first, longest on a tie) and replaces each with
// `[REDACTED:<detector>]`. No regex is built per call.
import type { DlpPolicyConfig } from '../../src/config/types';
import type { Redaction, Redactor } from '../../src/pipeline/context';
import { customDetector, DETECTORS, type Detector, type DetectorRule } from './detectors';

interface CompiledRule {
  readonly rule: DetectorRule;
  readonly detector: string;
}

interface Span {
  start: number;
  end: number;
  detector: string;
}

const HAS_DIGIT = /\d/;
const NO_DETECTORS: Readonly<Record<string, number>> = Object.freeze({});

function findSpans(rules: readonly CompiledRule[], text: string): Span[] {
  const spans: Span[] = [];
  let hasDigit: boolean | undefined;
  let hasAt: boolean | undefined;
  for (const { rule, detector } of rules) {
    if (rule.needs === 'digit' && !(hasDigit ??= HAS_DIGIT.test(text))) continue;
    if (rule.needs === 'at' && !(hasAt ??= text.includes('@'))) continue;
    rule.scan(text, (start, end) => spans.push({ start, end, detector }));
  }
  return spans;
}

class PolicyRedactor implements Redactor {
  constructor(private readonly rules: readonly CompiledRule[]) {}

  redact(text: string): Redaction {
    if (text.length === 0) return { text, count: 0, detectors: NO_DETECTORS };
    const spans = findSpans(this.rules, text);
    if (spans.length === 0) return { text, count: 0, detectors: NO_DETECTORS };
    spans.sort((a, b) => a.start - b.start || b.end - a.end);
    let out = '';
    let cursor = 0;
    let count = 0;
    const detectors: Record<string, number> = {};
    for (const span of spans) {
      if (span.start < cursor) continue; // overlaps a span already replaced
      out += `${text.slice(cursor, span.start)}[REDACTED:${span.detector}]`;
      cursor = span.end;
      count++;
      detectors[span.detector] = (detectors[span.detector] ?? 0) + 1;
    }
    return { text: out + text.slice(cursor), count, detectors };
  }
}

/** The redactor of a policy, or null when the policy is off or detects nothing. */
export function compilePolicy(policy: DlpPolicyConfig): Redactor | null {
  if (!policy.enabled) return null;
  const detectors: Detector[] = [...policy.detectors.map((name) => DETECTORS[name]), ...policy.custom.map((c) => customDetector(c.name, c.pattern))];
  const rules: CompiledRule[] = detectors.flatMap((d) => d.rules.map((rule) => ({ rule, detector: d.name })));
  return rules.length === 0 ? null : new PolicyRedactor(rules);
}
