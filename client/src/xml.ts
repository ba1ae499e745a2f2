/**
 * Pretty-prints an XML document as text, two spaces per level, or returns undefined when it is
 * not well-formed. DOMParser builds an inert document (no script runs, nothing loads); the
 * result is only ever shown as text.
 */
export function prettyXml(text: string): string | undefined {
  const doc = new DOMParser().parseFromString(text, 'application/xml');
  if (doc.getElementsByTagName('parsererror').length > 0) return undefined;
  const lines: string[] = [];
  // The parser keeps no XML declaration node; show the sender's as it was.
  const declaration = /^\s*(<\?xml[^?]*\?>)/.exec(text);
  if (declaration) lines.push(declaration[1] as string);
  for (const child of doc.childNodes) write(child, 0, lines);
  return lines.join('\n');
}

function escapeText(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function openTag(element: Element): string {
  const attributes = Array.from(element.attributes, (attribute) => ` ${attribute.name}="${escapeText(attribute.value).replace(/"/g, '&quot;')}"`);
  return `<${element.tagName}${attributes.join('')}`;
}

function write(node: Node, depth: number, lines: string[]): void {
  const indent = '  '.repeat(depth);
  switch (node.nodeType) {
    case Node.ELEMENT_NODE: {
      const element = node as Element;
      const children = Array.from(element.childNodes).filter((child) => !(child.nodeType === Node.TEXT_NODE && child.textContent?.trim() === ''));
      if (children.length === 0) {
        lines.push(`${indent}${openTag(element)}/>`);
      } else if (children.length === 1 && children[0]?.nodeType === Node.TEXT_NODE) {
        lines.push(`${indent}${openTag(element)}>${escapeText(children[0].textContent?.trim() ?? '')}</${element.tagName}>`);
      } else {
        lines.push(`${indent}${openTag(element)}>`);
        for (const child of children) write(child, depth + 1, lines);
        lines.push(`${indent}</${element.tagName}>`);
      }
      break;
    }
    case Node.TEXT_NODE:
      lines.push(`${indent}${escapeText(node.textContent?.trim() ?? '')}`);
      break;
    case Node.CDATA_SECTION_NODE:
      lines.push(`${indent}<![CDATA[${node.textContent ?? ''}]]>`);
      break;
    case Node.COMMENT_NODE:
      lines.push(`${indent}<!--${node.textContent ?? ''}-->`);
      break;
    case Node.PROCESSING_INSTRUCTION_NODE: {
      const instruction = node as ProcessingInstruction;
      lines.push(`${indent}<?${instruction.target} ${instruction.data}?>`);
      break;
    }
    case Node.DOCUMENT_TYPE_NODE:
      lines.push(`${indent}<!DOCTYPE ${(node as DocumentType).name}>`);
      break;
    default:
      break;
  }
}

/** Worth trying as XML: an XML media type, or text that starts like markup. */
export function looksLikeXml(contentType: string | null, body: string): boolean {
  const type = contentType?.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  if (type.endsWith('/xml') || type.endsWith('+xml')) return true;
  return /^\s*<(\?xml|[A-Za-z_])/.test(body) && !type.startsWith('text/html');
}
