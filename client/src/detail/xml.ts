import { XMLParser, XMLValidator } from 'fast-xml-parser';

/**
 * Pretty-prints an XML document as text, two spaces per level, or returns undefined when it is
 * not well-formed.
 *
 * fast-xml-parser, not DOMParser: a browser's XML parser builds elements, and Chromium styles its
 * parse-error report inline, as it does an XHTML or SVG element the sender styled, which the page's
 * CSP (`style-src 'self'`) refuses with a console error. Nothing here touches the DOM.
 * Its validator is lenient, so a few well-formedness rules it skips are checked here: XML
 * characters only, one root element, no undeclared entity, no undeclared namespace prefix.
 * Entities declared in a DOCTYPE count as undeclared: their body is shown raw.
 */
export function prettyXml(text: string): string | undefined {
  const source = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  if (NOT_A_CHAR.test(source) || XMLValidator.validate(source) !== true) return undefined;
  const lines: string[] = [];
  try {
    const nodes = parser.parse(source) as XmlNode[];
    // The validator misses a second root or text after a root written `<a/>`: only comments and
    // PIs may follow the root element.
    const root = nodes.find((node) => !/^[?#]/.test(nameOf(node)));
    if (root === undefined || !ONLY_MISC.test(source.slice(span(root).endIndex))) return undefined;
    for (const node of nodes) write(node, 0, source, new Set(['xml']), lines);
  } catch {
    return undefined;
  }
  // The parser drops the DOCTYPE: put it back after the comments and PIs that precede it.
  const [, before = '', doctype] = PROLOG.exec(source) ?? [];
  if (doctype !== undefined) lines.splice(before.match(new RegExp(MISC_MARKUP, 'g'))?.length ?? 0, 0, doctype);
  else if (source.startsWith('<!DOCTYPE', before.length)) return undefined;
  return lines.join('\n');
}

/** One node as the parser gives it with preserveOrder: `{ [name]: children, ':@': attributes }`. */
type XmlNode = Record<string, XmlNode[] | string> & { ':@'?: Record<string, string> };

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  commentPropName: '#comment',
  cdataPropName: '#cdata',
  // References are checked and decoded below, so that an undeclared one is an error.
  processEntities: false,
  parseTagValue: false,
  // For a PI's data, which the tree does not keep, and for what follows the root.
  captureMetaData: true,
  maxNestedTags: 1000,
  // The parser renames `toString` and the like (and throws on `constructor`, `__proto__`):
  // such a document is shown raw rather than with names it never had.
  onDangerousProperty: () => {
    throw new Error('a name the parser would rename');
  },
});
const META = XMLParser.getMetaDataSymbol() as unknown as symbol;

const NOT_A_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
// A PI or a comment, and white space: each alternative starts with its own character and stops at
// its first end, so a run of them matches in linear time (a body is untrusted input).
const MISC_MARKUP = String.raw`<\?(?:[^?]|\?(?!>))*\?>|<!--(?:[^-]|-(?!->))*-->`;
const ONLY_MISC = new RegExp(`^(?:\\s|${MISC_MARKUP})*$`);
/** The comments and PIs before a DOCTYPE, and the DOCTYPE (a `]` in its internal subset only quoted). */
const PROLOG = new RegExp(`^((?:\\s|${MISC_MARKUP})*)(<!DOCTYPE(?:[^[>]|\\[(?:[^\\]"']|"[^"]*"|'[^']*')*\\])*>)?`);
const REFERENCE = /&(?:#x([0-9A-Fa-f]+)|#([0-9]+)|(lt|gt|amp|quot|apos));/g;
const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function fail(): never {
  throw new Error('not well-formed');
}

function nameOf(node: XmlNode): string {
  return Object.keys(node).find((key) => key !== ':@') ?? '';
}

/** Where an element or PI lies in the source. */
function span(node: XmlNode): { startIndex: number; endIndex: number } {
  return (node as unknown as Record<symbol, { startIndex: number; endIndex: number }>)[META] ?? fail();
}

/** Text with its references replaced; throws on a stray '&' or a reference to a non-character. */
function decode(raw: string): string {
  if (raw.replace(REFERENCE, '').includes('&')) fail();
  return raw.replace(REFERENCE, (_, hex?: string, decimal?: string, name?: string) => {
    if (name !== undefined) return ENTITIES[name] ?? '';
    const code = hex !== undefined ? parseInt(hex, 16) : Number(decimal);
    const char = code <= 0x10ffff ? String.fromCodePoint(code) : '';
    if (char === '' || NOT_A_CHAR.test(char)) fail();
    return char;
  });
}

function escapeText(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The text inside a text, comment or CDATA node. */
function inner(node: XmlNode, name: string): string {
  const value = node[name];
  return typeof value === 'string' ? value : String(value?.[0]?.['#text'] ?? '');
}

function textOf(node: XmlNode): string {
  const raw = inner(node, '#text');
  if (raw.includes(']]>')) fail();
  return escapeText(decode(raw));
}

/** Throws for what the validator let through; `prefixes` are the namespace prefixes in scope. */
function write(node: XmlNode, depth: number, source: string, prefixes: Set<string>, lines: string[]): void {
  const indent = '  '.repeat(depth);
  const name = nameOf(node);
  if (name === '#text') {
    lines.push(`${indent}${textOf(node)}`);
  } else if (name === '#cdata') {
    lines.push(`${indent}<![CDATA[${inner(node, name)}]]>`);
  } else if (name === '#comment') {
    const value = inner(node, name);
    if (/--|-$/.test(value)) fail();
    lines.push(`${indent}<!--${value}-->`);
  } else if (name.startsWith('?')) {
    const { startIndex, endIndex } = span(node);
    lines.push(`${indent}${source.slice(startIndex, endIndex)}`);
  } else {
    const scope = new Set(prefixes);
    const attributes = Object.entries(node[':@'] ?? {});
    for (const [attribute, value] of attributes) {
      if (attribute === 'xmlns' || attribute.startsWith('xmlns:')) scope.add(attribute.slice(6));
      if (value.includes('<')) fail();
    }
    for (const qualified of [name, ...attributes.map(([attribute]) => attribute)]) {
      const prefix = qualified.includes(':') ? qualified.slice(0, qualified.indexOf(':')) : '';
      if (prefix !== '' && prefix !== 'xmlns' && !scope.has(prefix)) fail();
    }
    // Attribute-value normalisation: literal white space becomes a space, then references are decoded.
    const open = `<${name}${attributes.map(([attribute, value]) => ` ${attribute}="${escapeText(decode(value.replace(/[\t\n]/g, ' '))).replace(/"/g, '&quot;')}"`).join('')}`;
    const children = node[name] as XmlNode[];
    const only = children[0];
    if (only === undefined) {
      lines.push(`${indent}${open}/>`);
    } else if (children.length === 1 && nameOf(only) === '#text') {
      lines.push(`${indent}${open}>${textOf(only)}</${name}>`);
    } else {
      lines.push(`${indent}${open}>`);
      for (const child of children) write(child, depth + 1, source, scope, lines);
      lines.push(`${indent}</${name}>`);
    }
  }
}
