// Whether a body looks like XML: cheap, so the page can tell before it loads the XML view
// (xml.ts and its parser, about 20 KB, fetched with import() when such a body is first opened).

/** Worth trying as XML: an XML media type, or text that starts like markup. */
export function looksLikeXml(contentType: string | null, body: string): boolean {
  const type = contentType?.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  if (type.endsWith('/xml') || type.endsWith('+xml')) return true;
  return /^\s*<(\?xml|[A-Za-z_])/.test(body) && !type.startsWith('text/html');
}
