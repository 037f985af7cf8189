import { type CountryCode, getCountries, getExampleNumber } from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/mobile/examples';

/**
 * Issue #13: a probe of 50 realistic values leaked 18. This corpus has well over 200 values in many countries'
 * formats (phones, cards, IBANs, SSNs, emails); none may leak, anywhere (redactCorpus.unit.test.ts, and end to end
 * in test/integration/piiEndToEnd.int.test.ts).
 */
export const digitsOf = (s: string) => s.normalize('NFKC').replace(/\D/g, '');
const fullWidth = (s: string) => s.replace(/[0-9]/g, (d) => String.fromCharCode(0xff10 + Number(d)));

const NATIONAL_REGIONS: CountryCode[] = ['US', 'GB', 'FR', 'DE', 'IN', 'ES', 'IT', 'BR', 'JP', 'AU', 'NL', 'MX'];
const phones: string[] = [
  '+33 1 23 45 67 89',
  '0049 30 1234567',
  '+91 98765 43210',
  '+44 20 7946 0958',
  '+1 (415) 555-2671',
  '+81 3-1234-5678',
  '+55 11 91234-5678',
  '+61 2 9374 4000',
  '+34 912 34 56 78',
  '+39 06 6982 1234',
];
for (const c of getCountries()) {
  const n = getExampleNumber(c, examples);
  if (!n) continue;
  phones.push(n.formatInternational(), n.number, `00${n.number.slice(1)}`);
  if (NATIONAL_REGIONS.includes(c)) phones.push(n.formatNational());
}
const cards = [
  '4111111111111111',
  '5555555555554444',
  '378282246310005',
  '6011111111111117',
  '3530111333300000',
].flatMap((c) => [
  c,
  c.replace(/(\d{4})(?=\d)/g, '$1 '),
  c.replace(/(\d{4})(?=\d)/g, '$1.'),
  c.replace(/(\d{4})(?=\d)/g, '$1-'),
  c.replace(/(\d{4})(?=\d)/g, '$1\u00a0'),
  fullWidth(c),
]);
const ibans = [
  'DE89 3704 0044 0532 0130 00',
  'DE89370400440532013000',
  'GB29 NWBK 6016 1331 9268 19',
  'FR14 2004 1010 0505 0001 3M02 606',
  'ES91 2100 0418 4502 0005 1332',
  'IT60 X054 2811 1010 0000 0123 456',
  'NL91 ABNA 0417 1643 00',
  'BE68 5390 0754 7034',
  'CH93 0076 2011 6238 5295 7',
];
const ssns = ['123-45-6789', '078-05-1120', '219-09-9999', '536 22 1234'];
export const emails = [
  'jane.doe+refunds@example.co.uk',
  'josé.garcía@correo.es',
  'müller@beispiel.de',
  '用户@例子.中国',
  'jane%40example.com',
  'o%27brien%40mail.ie',
  'ｊａｎｅ＠ｅｘａｍｐｌｅ．ｃｏｍ',
];
export const secrets = [...phones, ...phones.slice(0, 40).map(fullWidth), ...cards, ...ibans, ...ssns];
