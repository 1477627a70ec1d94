// DLP detectors on real-looking text, false positives included: what must be redacted is, and order
// numbers, versions, dates, UUIDs, invalid cards and IBANs are left alone.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { cardIssuerValid, ibanValid, luhnValid, ssnValid } from '../../plugins/dlp/checksums';
import { buildOrgRedactors } from '../../plugins/dlp/org-redactors';
import { DETECTORS } from '../../plugins/dlp/detectors';
import { compilePolicy } from '../../plugins/dlp/redactor';
import dlpPlugin from '../../plugins/dlp';
import { parseConfig } from '../../src/config/load';
import type { DlpDetector } from '../../src/config/types';
import type { Redactor } from '../../src/pipeline/context';
import { testConfig } from '../helpers/config';

function only(...detectors: DlpDetector[]): Redactor {
  const redactor = compilePolicy({ enabled: true, detectors, custom: [] });
  assert.ok(redactor);
  return redactor;
}

const all = only(...(Object.keys(DETECTORS) as DlpDetector[]));

describe('plugins/dlp', () => {
  describe('checksums', () => {
    it('Luhn accepts test card numbers and rejects a changed digit', () => {
      assert.equal(luhnValid('4111111111111111'), true);
      assert.equal(luhnValid('378282246310005'), true);
      assert.equal(luhnValid('4111111111111112'), false);
    });
    it('requires a card network prefix and length', () => {
      assert.equal(cardIssuerValid('4111111111111111'), true);
      assert.equal(cardIssuerValid('1234567890123452'), false); // Luhn-valid, no issuer
      assert.equal(luhnValid('1234567890123452'), true);
    });
    it('applies the SSA area/group/serial rules', () => {
      assert.equal(ssnValid('536', '22', '1234'), true);
      for (const [a, g, s] of [
        ['000', '12', '3456'],
        ['666', '12', '3456'],
        ['912', '34', '5678'],
        ['123', '00', '4567'],
        ['123', '45', '0000'],
      ]) {
        assert.equal(ssnValid(a as string, g as string, s as string), false, `${a}-${g}-${s}`);
      }
    });
    it('checks IBAN mod 97 and country length', () => {
      assert.equal(ibanValid('DE89370400440532013000'), true);
      assert.equal(ibanValid('GB82WEST12345698765432'), true);
      assert.equal(ibanValid('DE89370400440532013001'), false);
      assert.equal(ibanValid('DE8937040044053201300'), false); // one short
      assert.equal(ibanValid('ZZ89370400440532013000'), false); // no such country
    });
  });

  describe('detectors', () => {
    it('redacts e-mail addresses', () => {
      const out = only('email').redact('Write to jane.doe@example.com or ops+alerts@sub.example.co.uk.');
      assert.deepEqual(out, { text: 'Write to [REDACTED:email] or [REDACTED:email].', count: 2, detectors: { email: 2 } });
    });

    it('redacts Luhn-valid card numbers in the usual groupings, not invalid ones', () => {
      const text = 'Visa 4111 1111 1111 1111, MC 5500-0000-0000-0004, Amex 3782 822463 10005, Discover 6011111111111117; typo 4111 1111 1111 1112';
      const out = only('credit_card').redact(text);
      assert.equal(
        out.text,
        'Visa [REDACTED:credit_card], MC [REDACTED:credit_card], Amex [REDACTED:credit_card], Discover [REDACTED:credit_card]; typo 4111 1111 1111 1112',
      );
      assert.equal(out.count, 4);
    });

    it('does not take a Luhn-valid order number or mixed separators for a card', () => {
      const text = 'Order 1234567890123452 and 4111-1111 1111-1111 and 41111 11111 11111 1';
      assert.equal(only('credit_card').redact(text).count, 0);
    });

    it('redacts valid SSNs only', () => {
      const out = only('us_ssn').redact('SSN 536-22-1234 (also 536 22 1234); not 000-12-3456, 666-12-3456, 912-34-5678, 123-00-4567, 123-45-0000, 536-22 1234');
      assert.equal(
        out.text,
        'SSN [REDACTED:us_ssn] (also [REDACTED:us_ssn]); not 000-12-3456, 666-12-3456, 912-34-5678, 123-00-4567, 123-45-0000, 536-22 1234',
      );
    });

    it('redacts IBANs with a valid checksum, grouped or compact, and stops at the IBAN', () => {
      const out = only('iban').redact(
        'Pay DE89 3704 0044 0532 0130 00 or GB82WEST12345698765432 or FR14 2004 1010 0505 0001 3M02 606 THEN; wrong DE89 3704 0044 0532 0130 01',
      );
      assert.equal(out.text, 'Pay [REDACTED:iban] or [REDACTED:iban] or [REDACTED:iban] THEN; wrong DE89 3704 0044 0532 0130 01');
      assert.equal(out.count, 3);
    });

    it('redacts international and US phone numbers, not bare digit runs', () => {
      const phones = [
        '+1 (415) 555-0123',
        '+44 20 7946 0958',
        '(415) 555-0123',
        '415-555-0123',
        '415.555.0123',
        '+33 1 23 45 67 89',
        '+14155550123',
        '1-800-555-0199',
        '+49 (0)30 1234567',
      ];
      for (const phone of phones) {
        assert.equal(only('phone').redact(`call ${phone} today`).text, 'call [REDACTED:phone] today', phone);
      }
      for (const notPhone of ['4155550123', 'ticket 5551234', '123-456-7890', '+1 5', 'v1.415.555.0123.4']) {
        assert.equal(only('phone').redact(notPhone).count, 0, notPhone);
      }
    });

    it('redacts API keys and tokens of the common providers', () => {
      const secrets = [
        'sk-proj-4fG7hJ2kL9mN3pQ6rS8tV1wX5yZ0aB2c',
        'sk-ant-api03-Xk29fJ3LmQ8pR7sT1vW4yZ6bC0dE5gH',
        'AKIAIOSFODNN7EXAMPLE',
        'ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R',
        'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123',
        'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
        'sk_live_4eC39HqLyjWDarjtT1zdp7dc',
        'AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q',
        'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
      ];
      for (const secret of secrets) {
        assert.equal(only('secret_key').redact(`use ${secret} here`).text, 'use [REDACTED:secret_key] here', secret);
      }
    });

    it('redacts bearer tokens, key=value secrets and PEM private keys, keeping the names', () => {
      const text = [
        'Authorization: Bearer abcDEF123456ghiJKL789mno',
        'api_key=9f8e7d6c5b4a3f2e1d0c',
        '"client_secret": "Zq8X2mV9pL4kR7tW1nB6"',
        'password: Tr0ub4dor&3xyzzyPlugh',
        '-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aumK\n-----END RSA PRIVATE KEY-----',
      ].join('\n');
      const out = only('secret_key').redact(text);
      assert.equal(
        out.text,
        [
          'Authorization: Bearer [REDACTED:secret_key]',
          'api_key=[REDACTED:secret_key]',
          '"client_secret": "[REDACTED:secret_key]"',
          'password: [REDACTED:secret_key]',
          '[REDACTED:secret_key]',
        ].join('\n'),
      );
      assert.equal(out.count, 5);
    });

    it('leaves words that merely look like secret syntax', () => {
      const text =
        'sk-learn-compatible-estimators-are-great; Bearer authentication-scheme; token: expiredtokenvalue; max_tokens=1024; the secret=supersecretpassword';
      assert.equal(only('secret_key').redact(text).count, 0);
    });

    it('leaves order numbers, versions, dates, UUIDs and ordinary numbers alone (all detectors)', () => {
      const text = [
        'Order #100234987 shipped on 2024-01-15 (2024-01-15T10:30:00Z), tracking 1Z999AA10123456784.',
        'Upgrade from version 1.2.3 to 10.0.19045; build 20240115103000.',
        'Request id 123e4567-e89b-12d3-a456-426614174000, invoice 2024-000123, EAN 4006381333931.',
        'Totals: 1,234,567 units at 3.14159; ISBN 978-0-306-40615-7; zip 94103-1234; host 192.168.1.1:8080.',
        'Order 1234567890123456, part 1234 5678, room 555-1234, coordinates 37.7749,-122.4194.',
      ].join('\n');
      assert.deepEqual(all.redact(text), { text, count: 0, detectors: {} });
    });

    it('redacts a mixed message once per span', () => {
      const out = all.redact('Hi, I am jane@example.com, card 4111111111111111, call +1 415 555 0123, key sk-proj-4fG7hJ2kL9mN3pQ6rS8tV1wX5yZ0aB2c.');
      assert.equal(out.text, 'Hi, I am [REDACTED:email], card [REDACTED:credit_card], call [REDACTED:phone], key [REDACTED:secret_key].');
      assert.equal(out.count, 4);
      assert.deepEqual(out.detectors, { email: 1, credit_card: 1, phone: 1, secret_key: 1 });
    });

    it('redacts an unterminated PEM private key: its BEGIN line and the key body after it', () => {
      const out = only('secret_key').redact('my key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\nAAAAAAAB\n\nthanks, bye');
      assert.equal(out.text, 'my key:\n[REDACTED:secret_key]thanks, bye');
    });
  });

  describe('policies', () => {
    it('applies custom patterns under their own name, and survives empty matches', () => {
      const redactor = compilePolicy({
        enabled: true,
        detectors: [],
        custom: [
          { name: 'employee_id', pattern: 'EMP-\\d{6}' },
          { name: 'empty', pattern: 'x*' },
        ],
      });
      assert.ok(redactor);
      assert.deepEqual(redactor.redact('badge EMP-004211 issued'), {
        text: 'badge [REDACTED:employee_id] issued',
        count: 1,
        detectors: { employee_id: 1 },
      });
    });

    it('only runs the detectors the policy lists', () => {
      const out = only('email').redact('jane@example.com 4111111111111111');
      assert.equal(out.text, '[REDACTED:email] 4111111111111111');
    });

    it('is off for a disabled policy and for an organization without a dlp block; a block without detectors gets all of them', () => {
      const config = testConfig({
        organizations: [
          { id: 'off', name: 'Off', dlp: { enabled: false } },
          { id: 'mail', name: 'Mail', dlp: { detectors: ['email'], custom: [{ name: 'ticket', pattern: 'TCK-[0-9]+' }] } },
          { id: 'plain', name: 'Plain' },
          { id: 'on', name: 'On', dlp: { enabled: true } },
        ],
      });
      const orgs = buildOrgRedactors(config);
      assert.equal(orgs.forOrg('off'), null);
      assert.equal(orgs.forOrg('mail')?.redact('a@b.io TCK-12 4111111111111111').text, '[REDACTED:email] [REDACTED:ticket] 4111111111111111');
      assert.equal(orgs.forOrg('plain'), null, 'no dlp block: no policy');
      assert.equal(orgs.forOrg('default'), null, 'store-only organizations have no policy');
      assert.equal(orgs.forOrg('on')?.redact('a@b.io 4111111111111111').text, '[REDACTED:email] [REDACTED:credit_card]');
    });

    it('agrees with the shipped config/gateway.yaml and the schema: an organization without a dlp block has no policy', () => {
      const root = path.join(__dirname, '../..');
      const shipped = parseConfig(readFileSync(path.join(root, 'config/gateway.yaml'), 'utf8'), {}, 'gateway.yaml');
      assert.equal(shipped.organizations.find((o) => o.id === 'default')?.dlp, undefined, 'the shipped default organization has no dlp block');
      assert.equal(buildOrgRedactors(shipped).forOrg('default'), null);
      const schema = JSON.parse(readFileSync(path.join(root, 'config/gateway.schema.json'), 'utf8')) as {
        properties: { organizations: { items: { properties: { dlp: { description: string } } } } };
      };
      assert.match(schema.properties.organizations.items.properties.dlp.description, /Without this block the organization has no policy/);
    });

    it("sets ctx.dlp to the caller organization's redactor", async () => {
      const config = testConfig({
        organizations: [
          { id: 'off', name: 'Off', dlp: { enabled: false } },
          { id: 'on', name: 'On', dlp: { enabled: true } },
        ],
      });
      const hooks = await dlpPlugin.create({ enabled: true }, { config } as never);
      const ctx = { principal: { orgId: 'on', userId: 'u', keyId: null, role: 'member', groups: [] }, dlp: null, redactions: null } as {
        principal: { orgId: string };
        dlp: Redactor | null;
        redactions: Record<string, number> | null;
      };
      await hooks.onRequest?.(ctx as never);
      assert.equal(ctx.dlp?.redact('x a@b.io').text, 'x [REDACTED:email]');
      ctx.dlp?.redact('c@d.io 4111111111111111');
      assert.deepEqual(ctx.redactions, { email: 2, credit_card: 1 }, 'counted per detector for the audit record');
      assert.equal(hooks.redactorFor?.('on')?.redact('a@b.io').text, '[REDACTED:email]', 'offered to agent runs');
      assert.equal(hooks.redactorFor?.('off'), null);
      ctx.principal.orgId = 'off';
      await hooks.onRequest?.(ctx as never);
      assert.equal(ctx.dlp, null);
    });
  });
});
