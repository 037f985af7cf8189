import { featuresOf } from './features.ts';
import { eachMatch, type Span, spanRedactor } from './text.ts';

/**
 * Street addresses, by the street-type words of English, German, French, Spanish and Italian addresses next to a
 * house number: "1600 Pennsylvania Avenue NW", "221B Baker Street, Apt 2", "Hauptstraße 5", "12 rue de la Paix",
 * "Calle Mayor 10", "Via Roma 1". No maintained npm library finds addresses in free text (the parsers, like
 * parse-address, read a string already known to be one), so this is a pattern of its own, and a heuristic: a street
 * without its type word ("at 12 Baker") is not found (docs/producers.md says so).
 */
const STREET_TYPES =
  'Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Ter|Parkway|Pkwy|Circle|Cir|Highway|Hwy|Square|Sq|Trail|Trl|Crescent|Close|Mews|Row|Gardens|Grove|Hill';
const EN = new RegExp(
  `(?<![\\p{L}\\p{N}])\\d{1,6}[A-Za-z]? (?:[NSEW]\\.? |(?:North|South|East|West) )?(?:(?:[A-Z][a-z]{1,20}|\\d{1,3}(?:st|nd|rd|th)) ){1,4}(?:${STREET_TYPES})\\b\\.?(?: (?:NW|NE|SW|SE|N|S|E|W)\\b)?(?:,? (?:Apt|Apartment|Suite|Ste|Unit|Flat|#) ?[A-Za-z0-9-]{1,6})?`,
  'gu',
);
const DE =
  /(?<![\p{L}\p{N}])[A-ZÄÖÜ][a-zäöüß-]{1,30}(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|damm|ufer) \d{1,4}[a-z]?(?![\p{L}\p{N}])/gu;
const FR =
  /(?<![\p{L}\p{N}])\d{1,4}(?: ?(?:bis|ter))?,? (?:rue|avenue|av\.|boulevard|bd|place|chemin|allée|impasse|quai|route|cours) (?:(?:de|du|des|la|le|l'|d')\s?){0,2}[\p{Lu}][\p{L}'-]{1,30}(?: [\p{Lu}][\p{L}'-]{1,30}){0,3}/gu;
const ES_IT =
  /(?<![\p{L}\p{N}])(?:Calle|C\/|Avenida|Avda\.|Plaza|Paseo|Carrer|Rua|Via|Viale|Piazza|Corso)(?: (?:de|del|la|las|los|da|do|dos|di|della|dei))? [\p{Lu}][\p{L}'-]{1,30}(?: [\p{Lu}][\p{L}'-]{1,30}){0,3},? (?:n\.?º? ?)?\d{1,4}(?![\p{N}])/gu;

/** Each pattern with a cheap test of its street-type words: most texts have none, and no pattern runs on them. */
const PATTERNS: readonly [RegExp, RegExp][] = [
  [new RegExp(`\\b(?:${STREET_TYPES})\\b`), EN],
  [/(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|damm|ufer) \d/, DE],
  [/\b(?:rue|avenue|av\.|boulevard|bd|place|chemin|allée|impasse|quai|route|cours) /, FR],
  [/(?:Calle|C\/|Avenida|Avda\.|Plaza|Paseo|Carrer|Rua|Via|Viale|Piazza|Corso) /, ES_IT],
];

export const findAddresses = (text: string): Span[] => {
  const spans: Span[] = [];
  if (featuresOf(text).digits === 0) return spans; // every pattern has a house number
  for (const [hint, re] of PATTERNS)
    if (hint.test(text))
      eachMatch(re, text, (m) => spans.push({ start: m.index, end: m.index + m[0].length, label: '[ADDRESS]' }));
  return spans;
};

export const addressRedactor = spanRedactor('address', findAddresses);
