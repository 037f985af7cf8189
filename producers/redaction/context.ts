/**
 * Context rules: the words just before a number say what it is. "order 123456789", "ticket #4155552671",
 * "amount 1234567.89", "lat 40.7127753" are not phone numbers; "call 415 555 2671" is one, whatever its shape.
 * The nearest keyword within the window wins; neutral words ("number", "no", "is", ":") are skipped over.
 */
const NOT_PERSONAL = [
  'order',
  'orders',
  'invoice',
  'inv',
  'ticket',
  'case',
  'ref',
  'reference',
  'confirmation',
  'booking',
  'reservation',
  'tracking',
  'shipment',
  'parcel',
  'package',
  'awb',
  'sku',
  'ean',
  'upc',
  'gtin',
  'isbn',
  'issn',
  'asin',
  'item',
  'items',
  'product',
  'part',
  'model',
  'serial',
  'lot',
  'batch',
  'zip',
  'postal',
  'postcode',
  'amount',
  'total',
  'subtotal',
  'price',
  'cost',
  'balance',
  'refund',
  'usd',
  'eur',
  'gbp',
  'jpy',
  'timestamp',
  'ts',
  'epoch',
  'unix',
  'time',
  'created',
  'updated',
  'created_at',
  'updated_at',
  'lat',
  'latitude',
  'lon',
  'lng',
  'long',
  'longitude',
  'coordinates',
  'coords',
  'gps',
  'version',
  'build',
  'release',
  'ver',
  'qty',
  'quantity',
  'weight',
  'count',
  'page',
  'pages',
  'size',
  'bytes',
  'transaction',
  'txn',
  'trace',
  'span',
  'request',
  'session',
  'job',
  'run',
  'row',
  'record',
  'id',
  'uid',
  'pid',
  'port',
  'hash',
  'checksum',
  'commit',
  'pr',
  'issue',
  'rma',
  'claim',
  'policy',
  'receipt',
  'container',
  'flight',
  'seat',
  'room',
  'code',
  'pin',
  'otp',
  'account',
  'acct',
  'routing',
  'customer',
  'member',
  'user',
  'employee',
];
const PHONE = [
  'phone',
  'phones',
  'telephone',
  'tel',
  'call',
  'calling',
  'called',
  'mobile',
  'mob',
  'cell',
  'cellphone',
  'whatsapp',
  'signal',
  'telegram',
  'sms',
  'text',
  'texting',
  'fax',
  'contact',
  'reach',
  'dial',
  'ring',
  'msisdn',
  'telefon',
  'telefono',
  'teléfono',
  'telefone',
  'téléphone',
  'portable',
  'handy',
  'móvil',
  'movil',
  'celular',
  'cellulare',
  'numéro',
  'tél',
  'phone_number',
  'phonenumber',
];
const SSN = ['ssn', 'ss#', 'social', 'itin', 'tin', 'sin', 'nino', 'bsn', 'aadhaar', 'cpf', 'nir', 'dni', 'nie'];
const NEUTRAL = new Set([
  'number',
  'num',
  'no',
  'nr',
  'nº',
  'is',
  'was',
  'are',
  'my',
  'his',
  'her',
  'their',
  'our',
  'your',
  'the',
  'a',
  'an',
  'of',
  'at',
  'on',
  'to',
  'me',
  'us',
  'him',
  'them',
  'or',
  'and',
  'please',
  'pls',
  'new',
  'old',
  'main',
  'home',
  'work',
  'office',
  'direct',
  'line',
  'via',
  'by',
  'with',
  'for',
  'as',
  'it',
  'here',
  'cc',
  'on:',
]);

export type ContextKind = 'not_personal' | 'phone' | 'id' | undefined;

const KIND = new Map<string, ContextKind>([
  ...NOT_PERSONAL.map((w) => [w, 'not_personal'] as [string, ContextKind]),
  ...SSN.map((w) => [w, 'id'] as [string, ContextKind]),
  ...PHONE.map((w) => [w, 'phone'] as [string, ContextKind]),
]);

/** Non-Latin phone words, matched anywhere in the window. */
const PHONE_ANYWHERE = /电话|電話|手机|手機|携帯|휴대폰|전화|телефон|тел\.|هاتف|फ़ोन|फोन/;

/**
 * What the words before position `at` say about a number there: the nearest keyword within 40 characters
 * (stopping at a line break or a sentence end), skipping neutral words and punctuation.
 */
export const contextBefore = (text: string, at: number): ContextKind => contextWord(text, at).kind;

/** The keyword `contextBefore` decided by, and its kind. */
export const contextWord = (text: string, at: number): { kind: ContextKind; word?: string } => {
  const from = Math.max(0, at - 40);
  // the clause: after the last line break, ";" or sentence end (". " before a capital: "no. 123" goes on)
  let start = from;
  for (let i = at - 1; i >= from; i--) {
    const c = text[i]!;
    if (c === '\n' || c === ';') {
      start = i + 1;
      break;
    }
    if ((c === '.' || c === '!' || c === '?') && i + 2 < at && text[i + 1] === ' ' && /\p{Lu}/u.test(text[i + 2]!)) {
      start = i + 1;
      break;
    }
  }
  const clause = text.slice(start, at).toLowerCase();
  if (clause.length === 0) return { kind: undefined };
  if (/[\u0080-\uffff]/.test(clause) && PHONE_ANYWHERE.test(clause)) return { kind: 'phone' };
  // words from the nearest back, letters, digits, "_", "#" and "&"
  let end = clause.length;
  while (end > 0) {
    while (end > 0 && !WORD_CHAR.test(clause[end - 1]!)) end--;
    let begin = end;
    while (begin > 0 && WORD_CHAR.test(clause[begin - 1]!)) begin--;
    if (begin === end) break;
    const w = clause.slice(begin, end);
    end = begin;
    if (w.includes('#')) return { kind: 'not_personal', word: '#' };
    const kind = KIND.get(w) ?? (w.endsWith('s') ? KIND.get(w.slice(0, -1)) : undefined);
    if (kind) return { kind, word: KIND.has(w) ? w : w.slice(0, -1) };
    if (NEUTRAL.has(w) || (w.charCodeAt(0) >= 48 && w.charCodeAt(0) <= 57)) continue;
    // a compound key: "order_no", "customer_phone", "phone_number"
    if (w.includes('_'))
      for (const part of w.split('_').reverse()) {
        const k = KIND.get(part);
        if (k) return { kind: k, word: part };
      }
    // the nearest other word ends the search
    return { kind: undefined };
  }
  return { kind: undefined };
};

const WORD_CHAR = /[\p{L}\p{N}_#&]/u;

/** Words that name an identifier of a thing (an order, a parcel, a product): a number after one is not a card. */
export const IDENTIFIER_WORDS = new Set([
  '#',
  'order',
  'orders',
  'invoice',
  'inv',
  'ticket',
  'case',
  'ref',
  'reference',
  'confirmation',
  'booking',
  'reservation',
  'tracking',
  'shipment',
  'parcel',
  'package',
  'awb',
  'sku',
  'ean',
  'upc',
  'gtin',
  'isbn',
  'issn',
  'asin',
  'item',
  'product',
  'part',
  'model',
  'serial',
  'lot',
  'batch',
  'transaction',
  'txn',
  'trace',
  'span',
  'request',
  'id',
  'uid',
  'receipt',
  'container',
  'timestamp',
  'ts',
  'epoch',
]);
