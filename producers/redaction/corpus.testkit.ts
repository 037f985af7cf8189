import { getCountries, getExampleNumber } from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/mobile/examples';
import { decodeHTML } from 'entities';

/**
 * The redaction corpus (issue #27): personal data and secrets in many formats, each written into a sentence as a
 * production trace would carry it, and ordinary values that look like them (order numbers, amounts, timestamps,
 * SKUs, barcodes, versions, coordinates), which must come back unchanged. Deterministic: no random values.
 *
 * A PII entry leaks when its `needle` (the part that identifies the person or opens the account) can still be read
 * in the output, after the output is normalized the way a reader would (NFKC, escapes decoded, separators between
 * digits dropped).
 */
export type PiiCategory = 'email' | 'phone' | 'card' | 'iban' | 'ssn' | 'national_id' | 'secret' | 'address';
/** The categories with a target of no leak at all. */
export const DEFAULT_SCOPE: readonly PiiCategory[] = ['email', 'phone', 'card', 'iban', 'ssn'];

export interface PiiEntry {
  readonly category: PiiCategory;
  readonly format: string;
  /** The text as a trace carries it. */
  readonly text: string;
  /** What must not be readable in the output. */
  readonly needle: string;
}

export interface LookAlike {
  readonly kind: string;
  readonly text: string;
}

const fullWidth = (s: string) => s.replace(/[0-9A-Za-z@.]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
const zeroWidth = (s: string) => [...s].join('\u200b');
const pct = (s: string) => s.replace('@', '%40');
const b64 = (s: string) => Buffer.from(s).toString('base64');
const luhnDigit = (body: string): string => {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return String((10 - (sum % 10)) % 10);
};
const gs1Digit = (body: string): string => {
  let sum = 0;
  for (let i = 0; i < body.length; i++) sum += Number(body[body.length - 1 - i]) * (i % 2 === 0 ? 3 : 1);
  return String((10 - (sum % 10)) % 10);
};
const groups = (s: string, size: number, sep: string) => s.replace(new RegExp(`(.{${size}})(?=.)`, 'g'), `$1${sep}`);

const entries: PiiEntry[] = [];
const add = (category: PiiCategory, format: string, text: string, needle: string) =>
  entries.push({ category, format, text, needle });

// ── emails ───────────────────────────────────────────────────────────────────────────────────────────────────────
const people = ['jane.doe', 'kate.miller', 'r.ortega', 'li.wei', 'amir.haddad', 'o.brien', 'nguyen.an', 'sofia.rossi'];
const domains = ['example.com', 'mail.example.org', 'example.co.uk', 'corp.example.de', 'example.io'];
people.forEach((p, i) => {
  const d = domains[i % domains.length]!;
  const e = `${p}@${d}`;
  add('email', 'plain', `mail me at ${e} today`, p);
  add('email', 'plus tag', `use ${p}+refunds@${d} for this`, p);
  add('email', 'upper case', `FROM: ${e.toUpperCase()}`, p.toUpperCase());
  add('email', 'angle brackets', `"Customer" <${e}> wrote`, p);
  add('email', 'mailto link', `<a href="mailto:${e}?subject=refund">write</a>`, p);
  add('email', 'percent-encoded', `GET /unsubscribe?user=${pct(e)}`, p);
  add('email', 'percent next to a literal %', `mail ${pct(e)}, refund 100% please`, p);
  add('email', 'double percent-encoded', `redirect=${e.replace('@', '%2540')}`, p);
  add('email', 'HTML decimal entity', `contact: ${e.replace('@', '&#64;')}`, p);
  add('email', 'HTML hex entity', `contact: ${e.replace('@', '&#x40;').replace(/\./g, '&#46;')}`, p);
  add('email', 'HTML named entity', `contact: ${e.replace('@', '&commat;')}`, p);
  add('email', 'JSON \\u0040', `{"note": "${e.replace('@', '\\u0040')}"}`, p);
  add('email', 'zero-width characters', `email ${zeroWidth(e)} pls`, p);
  add('email', 'soft hyphens', `email ${e.replace('.', '\u00ad.\u00ad')} ok`, p);
  add('email', 'full-width', `メール ${fullWidth(e)}`, p);
  add(
    'email',
    'written [at] [dot]',
    `${p.replace('.', ' [dot] ')} [at] ${d.replace(/\./g, ' [dot] ')}`,
    p.split('.')[1] ?? p,
  );
  add('email', 'written at / dot', `write to ${p} at ${d.replace(/\./g, ' dot ')}`, p);
  add('email', '(at) (dot)', `${p}(at)${d.replace(/\./g, '(dot)')}`, p);
  add('email', 'base64', `data=${b64(`user:${e}`)}`, b64(`user:${e}`).slice(0, 16));
});
const rfc = [
  ['quoted local part', '"jane doe"@example.com', 'jane doe'],
  ['quoted local part with @', '"jane@home"@example.com', 'jane@home'],
  ['IPv4 literal', 'postmaster@[192.0.2.17]', 'postmaster@[192'],
  ['IPv6 literal', 'jane@[IPv6:2001:db8::1]', 'jane@[IPv6'],
  ['comment before @', 'jane.doe(work)@example.com', 'jane.doe'],
  ['non-ASCII local part', 'josé.garcía@correo.es', 'josé.garcía'],
  ['non-ASCII domain', 'müller@beispiel.de', 'müller'],
  ['CJK', '用户@例子.中国', '用户'],
  ['apostrophe', "o'connor@example.ie", "o'connor"],
  ['subaddress with =', 'bounce=jane=example.com@lists.example.net', 'bounce=jane'],
  ['punycode domain', 'info@xn--mnchen-3ya.de', 'info@xn'],
  ['dots and dashes', 'a.b-c_d@sub-domain.example.travel', 'a.b-c_d'],
] as const;
for (const [format, e, needle] of rfc) add('email', format, `please reply to ${e} soon`, needle);

// ── phones ───────────────────────────────────────────────────────────────────────────────────────────────────────
const countries = getCountries().filter((c) => getExampleNumber(c, examples));
countries.forEach((c, i) => {
  const n = getExampleNumber(c, examples)!;
  const needle = n.nationalNumber.slice(-8);
  // every region in one international form, rotating through three
  const forms = [n.formatInternational(), n.number, `00${n.number.slice(1)}`];
  add('phone', ['international spaced', 'E.164', '00 prefix'][i % 3]!, `please contact ${forms[i % 3]} today`, needle);
});
const NATIONAL = ['US', 'GB', 'FR', 'DE', 'IN', 'ES', 'IT', 'BR', 'JP', 'AU', 'NL', 'MX', 'CN'] as const;
for (const c of NATIONAL) {
  const n = getExampleNumber(c, examples)!;
  add('phone', 'national format', `you can reach me on ${n.formatNational()}`, n.nationalNumber.slice(-8));
  add('phone', 'national, no context', `${n.formatNational()} is the one`, n.nationalNumber.slice(-8));
  add('phone', 'RFC 3966 tel: URI', `<a href="${n.getURI()}">call</a>`, n.nationalNumber.slice(-8));
}
const bare = [
  ['CN bare mobile', 'my number 13800138000', '13800138000'],
  ['CN bare mobile, no context', '13912345678 please', '13912345678'],
  ['US bare 10 digits', 'call 4155552671 tonight', '4155552671'],
  ['US bare, no context', 'it is 2125550199', '2125550199'],
  ['IN bare mobile', 'whatsapp 9876543210', '9876543210'],
  ['IN bare mobile, no context', 'ok 9812345678', '9812345678'],
  ['GB bare mobile', 'mobile 07700900123', '07700900123'],
  ['GB bare mobile, no context', 'send it to 07700900456', '07700900456'],
  ['FR bare', 'tel 0612345678', '0612345678'],
  ['FR dotted', 'tél. 06.12.34.56.78', '0612345678'],
  ['DE with slash', 'Telefon 030/1234567', '0301234567'],
  ['US parens', 'ring (212) 555-0142', '2125550142'],
  ['US dotted', '415.555.2671 is my cell', '4155552671'],
  ['full-width digits', '電話 ０９０−１２３４−５６７８', '09012345678'],
  ['zero-width inside', `phone ${zeroWidth('+14155552671')}`, '4155552671'],
  ['with extension', 'call +1 415-555-2671 ext. 204', '4155552671'],
  ['JSON number, country code', '{"contact": 14155552671}', '14155552671'],
  ['JSON number, key phone', '{"phone": 4155552671}', '4155552671'],
  ['JSON string, key mobile', '{"mobile": "07700900789"}', '07700900789'],
  ['tel: prefix', 'tel:+442079460958', '2079460958'],
  ['spaced +CC', '+ 44 20 7946 0958', '2079460958'],
] as const;
for (const [format, text, needle] of bare) add('phone', format, text, needle);

// ── cards ────────────────────────────────────────────────────────────────────────────────────────────────────────
const cardBodies = ['411111111111111', '555555555555444', '37828224631000', '601111111111111', '353011133330000'];
const cards = [...cardBodies.map((b) => b + luhnDigit(b)), '4012888888881881', '5105105105105100', '2223003122003222'];
const cardForms: [string, (c: string) => string][] = [
  ['plain', (c) => c],
  ['spaces', (c) => groups(c, 4, ' ')],
  ['dashes', (c) => groups(c, 4, '-')],
  ['dots', (c) => groups(c, 4, '.')],
  ['underscores', (c) => groups(c, 4, '_')],
  ['double spaces', (c) => groups(c, 4, '  ')],
  ['no-break spaces', (c) => groups(c, 4, '\u00a0')],
  ['full-width', (c) => fullWidth(c)],
];
cards.forEach((c, i) => {
  const [format, f] = cardForms[i % cardForms.length]!;
  add('card', format, `card ${f(c)} exp 12/27`, c.slice(-8));
  const [format2, f2] = cardForms[(i + 3) % cardForms.length]!;
  add('card', format2, `paid with ${f2(c)}`, c.slice(-8));
});
add('card', 'Amex 4-6-5', 'amex 3782 822463 10005 please', '82246310005');
add('card', 'JSON number', '{"pan": 4111111111111111}', '11111111');
add('card', 'JSON number, no key', '{"x": 5555555555554444}', '55554444');
add('card', 'zero-width inside', `card ${zeroWidth('4111111111111111')}`, '11111111');

// ── IBANs ────────────────────────────────────────────────────────────────────────────────────────────────────────
const ibans = [
  'DE89370400440532013000',
  'GB29NWBK60161331926819',
  'FR1420041010050500013M02606',
  'ES9121000418450200051332',
  'IT60X0542811101000000123456',
  'NL91ABNA0417164300',
  'BE68539007547034',
  'CH9300762011623852957',
];
ibans.forEach((b) => {
  add('iban', 'grouped by spaces', `IBAN: ${groups(b, 4, ' ')}`, b.slice(-8));
  add('iban', 'compact', `transfer to ${b} today`, b.slice(-8));
  add('iban', 'dotted', `${groups(b, 4, '.')}`, b.slice(-8));
  add('iban', 'lower case', `iban ${b.toLowerCase()}`, b.slice(-8).toLowerCase());
});

// ── SSNs ─────────────────────────────────────────────────────────────────────────────────────────────────────────
const ssns = ['123-45-6789', '078-05-1120', '219-09-9999', '536-22-1234', '457-55-5462', '321-54-9876'];
ssns.forEach((s, i) => {
  add('ssn', 'dashed', `SSN ${s}`, s.replace(/-/g, ''));
  add('ssn', 'spaced', `my social is ${s.replace(/-/g, ' ')}`, s.replace(/-/g, ''));
  add(
    'ssn',
    ['dotted', 'bare after SSN', 'JSON number under ssn'][i % 3]!,
    [`id ${s.replace(/-/g, '.')}`, `ssn: ${s.replace(/-/g, '')}`, `{"ssn": ${Number(s.replace(/-/g, ''))}}`][i % 3]!,
    s.replace(/-/g, '').replace(/^0+/, ''),
  );
});
add('ssn', 'ITIN', 'ITIN 912-70-1234', '912701234');

// ── national ids ─────────────────────────────────────────────────────────────────────────────────────────────────
const ids = [
  ['UK NINO', 'NI number AB 12 34 56 C', '12 34 56'],
  ['UK NINO compact', 'nino JG103759A', 'JG103759A'],
  ['Canadian SIN', 'SIN 046-454-286', '046454286'],
  ['Indian Aadhaar', 'aadhaar 2345 6789 0124', '234567890124'],
  ['Indian PAN', 'PAN ABCPE1234F', 'ABCPE1234F'],
  ['Spanish DNI', 'DNI 12345678Z', '12345678Z'],
  ['Spanish NIE', 'NIE X1234567L', 'X1234567L'],
  ['Italian codice fiscale', 'CF RSSMRA85T10A562S', 'RSSMRA85T10A562S'],
  ['Brazilian CPF', 'CPF 123.456.789-09', '12345678909'],
  ['Chinese resident id', '身份证 11010519491231002X', '11010519491231002X'],
  ['French NIR', 'n° sécu 1 85 05 78 006 084 91', '1850578006084'],
] as const;
for (const [format, text, needle] of ids) add('national_id', format, text, needle);

// ── secrets ──────────────────────────────────────────────────────────────────────────────────────────────────────
const jwt =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyLTQyIiwibmFtZSI6IkphbmUgRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
const secrets = [
  ['AWS access key id', 'aws_access_key_id = AKIAIOSFODNN7EXAMPLE', 'AKIAIOSFODNN7EXAMPLE'],
  ['AWS secret in a field', 'aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'wJalrXUtnFEMI'],
  ['GitHub token', 'token ghp_16C7e42F292c6912E7710c838347Ae178B4a', '16C7e42F292c6912E7710c8383'],
  [
    'GitHub fine-grained',
    'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ012345678',
    'abcdefghijklmnop',
  ],
  ['GitLab token', 'glpat-xxxxyyyyzzzz11112222', 'xxxxyyyyzzzz1111'],
  ['Slack bot token', 'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx', 'AbCdEfGhIjKlMnOp'],
  [
    'Slack webhook',
    'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX',
    'XXXXXXXXXXXXXXXX',
  ],
  ['Stripe live key', 'sk_live_4eC39HqLyjWDarjtT1zdp7dc', '4eC39HqLyjWDarjt'],
  ['OpenAI project key', 'OPENAI_API_KEY sk-proj-Abc123Def456Ghi789Jkl012Mno345', 'Abc123Def456Ghi789'],
  ['Anthropic key', 'key sk-ant-api03-AbCdEf123456_GhIjKl789012-MnOpQr', 'AbCdEf123456_GhIjKl'],
  ['Google API key', 'AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe', 'DaGmWKa4JsXZ-HjGw7'],
  ['SendGrid key', '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', 'TwL2iGABf9DHoTf'],
  ['npm token', 'npm_abcdefghijklmnopqrstuvwxyz0123456789', 'abcdefghijklmnopqrst'],
  ['Hugging Face token', 'hf_abcdefghijklmnopqrstuvwxyzABCDEFGH', 'abcdefghijklmnopqrst'],
  ['Twilio API key', 'SK0123456789abcdef0123456789abcdef', '0123456789abcdef0123'],
  ['JWT', `session ${jwt}`, 'SflKxwRJSMeKKF2QT4fw'],
  ['JWT in a header', `Authorization: Bearer ${jwt}`, 'SflKxwRJSMeKKF2QT4fw'],
  ['bearer, lower case', 'authorization: bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0', '9f8e7d6c5b4a3928'],
  ['Basic auth header', 'Authorization: Basic dXNlcjpodW50ZXIy', 'dXNlcjpodW50ZXIy'],
  [
    'PEM RSA key',
    '-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq98\nQ2xpZW50S2V5\n-----END RSA PRIVATE KEY-----',
    'MIIEpAIBAAKCAQEA7bq98',
  ],
  [
    'PEM EC key',
    'key: -----BEGIN EC PRIVATE KEY-----\\nMHcCAQEEIBkg4LVWM9nuwNSk\\n-----END EC PRIVATE KEY-----',
    'MHcCAQEEIBkg4LVWM9nuwNSk',
  ],
  ['PEM, clipped', '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU', 'b3BlbnNzaC1rZXktdjEAAAAA'],
  ['password in a URL', 'postgres://admin:S3cr3tPass@db.example.com:5432/app', 'S3cr3tPass'],
  ['password in an https URL', 'https://jane:hunter2x@example.com/private', 'hunter2x'],
  ['password field', 'login with password=Tr0ub4dor&3', 'Tr0ub4dor'],
  ['JSON password', '{"user": "x", "password": "correct-horse-battery"}', 'correct-horse-battery'],
  ['api_key field', 'api_key: a1b2c3d4e5f6g7h8', 'a1b2c3d4e5f6g7h8'],
] as const;
for (const [format, text, needle] of secrets) add('secret', format, text, needle);

// ── street addresses ─────────────────────────────────────────────────────────────────────────────────────────────
const addresses = [
  ['US street', 'ship to 1600 Pennsylvania Avenue NW, Washington', '1600 Pennsylvania'],
  ['US street, apartment', 'I live at 742 Evergreen Terrace, Apt 2', '742 Evergreen'],
  ['UK street', 'deliver to 221B Baker Street, London', '221B Baker'],
  ['US street, abbreviation', 'office: 350 Fifth Ave, New York', '350 Fifth'],
  ['German street', 'Lieferung an Hauptstraße 5, 10115 Berlin', 'Hauptstraße 5'],
  ['French street', 'envoyer au 12 rue de la Paix, Paris', 'rue de la Paix'],
  ['Spanish street', 'enviar a Calle Mayor 10, Madrid', 'Calle Mayor 10'],
  ['Italian street', 'spedire a Via Roma 1, Milano', 'Via Roma 1'],
] as const;
for (const [format, text, needle] of addresses) add('address', format, text, needle);

export const PII_CORPUS: readonly PiiEntry[] = entries;

// ── look-alikes: must come back unchanged ────────────────────────────────────────────────────────────────────────
const lookAlikes: LookAlike[] = [];
const like = (kind: string, text: string) => lookAlikes.push({ kind, text });
for (let i = 0; i < 40; i++) {
  const n = String(100_000_000 + ((i * 7_919_333) % 899_999_999));
  like('order number', [`order ${n} is late`, `Order #${n}`, `your order no. ${n}41 shipped`, `order_id=${n}`][i % 4]!);
}
for (let i = 0; i < 30; i++) {
  const whole = 1_000_000 + ((i * 3_456_789) % 98_000_000);
  like(
    'amount',
    [
      `amount ${whole}.${String(i).padStart(2, '0')}`,
      `total $${whole.toLocaleString('en-US')}.00`,
      `€${whole.toLocaleString('de-DE')},50`,
      `refund of ${whole} USD`,
      `${whole.toLocaleString('en-US')} EUR`,
    ][i % 5]!,
  );
}
for (let i = 0; i < 30; i++) {
  const s = 1_600_000_000 + i * 12_345_677;
  like(
    'timestamp',
    [`ts ${s}`, `created_at=${s}123`, `{"at": ${s}}`, new Date(s * 1000).toISOString(), `at ${s}`, `epoch ms ${s}456`][
      i % 6
    ]!,
  );
}
for (let i = 0; i < 30; i++)
  like(
    'SKU',
    [
      `SKU ${4000 + i}-${117 + i}-0${i % 10}`,
      `sku: WH-${1000 + i}XM4`,
      `item SKU-${88_231 + i * 17}-BLK-XL`,
      `part no. ${70_000_000 + i * 131}-A`,
      `model ${500 + i}-${1_000_000 + i * 7}`,
    ][i % 5]!,
  );
for (let i = 0; i < 30; i++) {
  const body12 = String(400_638_133_393 + i * 1_000_003);
  const ean = body12 + gs1Digit(body12);
  const upcBody = String(3_600_029_145 + i * 1_009).padStart(11, '0');
  like('EAN / UPC', [`EAN ${ean}`, `barcode ${ean}`, ean, `UPC ${upcBody}${gs1Digit(upcBody)}`][i % 4]!);
}
for (let i = 0; i < 25; i++)
  like(
    'version',
    [
      `version 10.0.${19_041 + i}.${1000 + i}`,
      `v${3 + (i % 4)}.${14 + i}.${159_265 + i}`,
      `build 2024.${(i % 12) + 1}.${1_000_000 + i}`,
      `node 20.${(i % 20) + 1}.${i}`,
      `1.2.${i}-beta.${4 + i}`,
    ][i % 5]!,
  );
for (let i = 0; i < 30; i++) {
  const lat = (40.7127753 + i * 0.0123457).toFixed(7);
  const lon = (-74.0059728 - i * 0.0234567).toFixed(7);
  like(
    'coordinates',
    [`${lat}, ${lon}`, `lat ${lat} lon ${lon}`, `{"lat": ${lat}, "lng": ${lon}}`, `${lat} ${lon}`, `geo:${lat},${lon}`][
      i % 5
    ]!,
  );
}
for (let i = 0; i < 15; i++)
  like(
    'ZIP+4',
    [`CA ${94_105 + i}-${1000 + i * 37}`, `zip ${10_001 + i}-${2000 + i}`, `Austin, TX ${78_701 + i}-${1234 + i}`][
      i % 3
    ]!,
  );
for (let i = 0; i < 20; i++)
  like(
    'ticket / invoice',
    [
      `ticket #${4_155_552_600 + i}`,
      `invoice INV-2024-${String(123 + i).padStart(6, '0')}`,
      `case ${41_555_526 + i * 11}`,
      `ref: ${20_240_520 + i}-${42 + i}`,
    ][i % 4]!,
  );
for (let i = 0; i < 15; i++)
  like(
    'tracking number',
    [
      `tracking 1Z999AA1${String(123_456_784 + i * 10).slice(0, 8)}`,
      `AWB ${(7_700_000_000 + i * 97).toString()}`,
      `parcel ${(9_400_100_000 + i * 13).toString()}`,
    ][i % 3]!,
  );
for (let i = 0; i < 20; i++)
  like(
    'measurement',
    [
      `${1_234_567 + i * 1000} ms`,
      `${5_000_000 + i * 321} bytes`,
      `${2_000_000 + i} km`,
      `population 8,${336 + i},817`,
      `${1_500_000 + i * 10}%`,
    ][i % 5]!,
  );
for (let i = 0; i < 20; i++)
  like(
    'identifier',
    [
      `trace 4bf92f3577b34da6a3ce929d0e0e${String(4736 + i)}`,
      `commit 9f8e7d6${i}c5b4a39281706f5e4d3c2b1a0`,
      `uuid 123e4567-e89b-12d3-a456-${String(426_614_174_000 + i)}`,
      `request id req_${1_234_567 + i}`,
    ][i % 4]!,
  );
for (let i = 0; i < 10; i++)
  like(
    'date and time',
    [`shipped 20/05/2024 at 14:${10 + i}`, `2024-05-${10 + i} 14:30:00`, `on 05.${10 + i}.2024, 09:15`][i % 3]!,
  );
export const LOOK_ALIKES: readonly LookAlike[] = lookAlikes;

/** Text as a reader sees it: NFKC, escapes decoded, zero-width characters and separators between digits dropped. */
export const readable = (text: string): string => {
  let t = text.normalize('NFKC').replace(/[\u200b-\u200d\u2060\u00ad\ufeff]/g, '');
  for (let i = 0; i < 3; i++) {
    try {
      t = decodeURIComponent(t);
    } catch {
      t = t.replace(/%40/gi, '@');
    }
  }
  t = decodeHTML(t).replace(/\\u0040/g, '@');
  return t.replace(/(\d)[\s.\-()/_\u00a0\u2010-\u2015\u2212\u30fc]+(?=\d)/g, '$1');
};

/** Whether the entry's needle can still be read in `output`. */
export const leaks = (entry: PiiEntry, output: string): boolean => {
  const needle = readable(entry.needle);
  const out = readable(output);
  return out.includes(needle) || out.toLowerCase().includes(needle.toLowerCase());
};

export interface CorpusScore {
  readonly recall: Map<string, { n: number; leaked: string[] }>;
  readonly precision: Map<string, { n: number; changed: string[] }>;
}

/**
 * Recall per category and precision per kind of look-alike. `redact(text, i)` gives what became of corpus item `i`
 * (PII entries first, then look-alikes); `same(original, out)` says whether a look-alike came back unchanged.
 */
export const scoreCorpus = (
  redact: (text: string, i: number) => string,
  same: (original: string, out: string) => boolean = (a, b) => a === b,
): CorpusScore => {
  const recall = new Map<string, { n: number; leaked: string[] }>();
  PII_CORPUS.forEach((e, i) => {
    const r = recall.get(e.category) ?? { n: 0, leaked: [] };
    recall.set(e.category, r);
    r.n++;
    const out = redact(e.text, i);
    if (leaks(e, out)) r.leaked.push(`${e.format}: ${JSON.stringify(e.text)} → ${JSON.stringify(out)}`);
  });
  const precision = new Map<string, { n: number; changed: string[] }>();
  LOOK_ALIKES.forEach((l, i) => {
    const p = precision.get(l.kind) ?? { n: 0, changed: [] };
    precision.set(l.kind, p);
    p.n++;
    const out = redact(l.text, PII_CORPUS.length + i);
    if (!same(l.text, out)) p.changed.push(`${JSON.stringify(l.text)} → ${JSON.stringify(out)}`);
  });
  return { recall, precision };
};

export const printScore = (title: string, s: CorpusScore): void => {
  const pct = (a: number, n: number) => `${((100 * a) / n).toFixed(1)}%`;
  const lines = [`${title}`, '  category      values  leaked  recall'];
  for (const [c, r] of s.recall) {
    lines.push(
      `  ${c.padEnd(12)}  ${String(r.n).padStart(6)}  ${String(r.leaked.length).padStart(6)}  ${pct(r.n - r.leaked.length, r.n).padStart(6)}`,
    );
    for (const l of r.leaked) lines.push(`    leaked: ${l}`);
  }
  lines.push('  look-alike          values  changed  precision');
  for (const [k, p] of s.precision)
    lines.push(
      `  ${k.padEnd(18)}  ${String(p.n).padStart(6)}  ${String(p.changed.length).padStart(7)}  ${pct(p.n - p.changed.length, p.n).padStart(9)}`,
    );
  process.stdout.write(`${lines.join('\n')}\n`);
};

/** The targets: no leak in the default scope, ≥ 99% recall overall, ≥ 99% precision; what misses them. */
export const missedTargets = (s: CorpusScore): string[] => {
  const leaked = [...s.recall].flatMap(([c, r]) => (DEFAULT_SCOPE.includes(c as PiiCategory) ? r.leaked : []));
  const all = [...s.recall.values()];
  const recall = 1 - all.reduce((a, r) => a + r.leaked.length, 0) / all.reduce((a, r) => a + r.n, 0);
  const changed = [...s.precision.values()].flatMap((p) => p.changed);
  const n = [...s.precision.values()].reduce((a, p) => a + p.n, 0);
  return [
    ...leaked.map((l) => `leak in the default scope: ${l}`),
    ...(recall < 0.99
      ? [`recall ${(recall * 100).toFixed(1)}% < 99%: ${all.flatMap((r) => r.leaked).join('; ')}`]
      : []),
    ...(1 - changed.length / n < 0.99 ? [`precision < 99%: ${changed.join('; ')}`] : []),
  ];
};
