import { describe, expect, it } from 'vitest';
import { prettyXml } from '../../client/src/detail/xml.js';

describe('the page: pretty XML', () => {
  it('indents a document two spaces a level, keeping the declaration, attributes, comments, CDATA and PIs', () => {
    const xml =
      '<?xml version="1.0" encoding="UTF-8"?><!-- feed --><feed xmlns="urn:a" xmlns:h="urn:h" lang="en">' +
      '<h:id h:n="1" kind=\'x"y\'>abc</h:id><entry><title> Hi </title><empty/></entry>' +
      '<![CDATA[<raw> & ]]><?pi some data?>tail</feed>';
    expect(prettyXml(xml)).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<!-- feed -->',
        '<feed xmlns="urn:a" xmlns:h="urn:h" lang="en">',
        '  <h:id h:n="1" kind="x&quot;y">abc</h:id>',
        '  <entry>',
        '    <title>Hi</title>',
        '    <empty/>',
        '  </entry>',
        '  <![CDATA[<raw> & ]]>',
        '  <?pi some data?>',
        '  tail',
        '</feed>',
      ].join('\n'),
    );
  });

  it('drops white space between elements, and keeps mixed content in order', () => {
    expect(prettyXml('<a>\r\n  <b/>\n  x<!--c-->y\n</a>\n')).toBe('<a>\n  <b/>\n  x\n  <!--c-->\n  y\n</a>');
  });

  it('keeps a DOCTYPE where it stood, and comments and PIs after the root', () => {
    expect(prettyXml('<?xml version="1.0"?><!-- c --><!DOCTYPE a SYSTEM "a.dtd"><a/><!-- end -->')).toBe(
      '<?xml version="1.0"?>\n<!-- c -->\n<!DOCTYPE a SYSTEM "a.dtd">\n<a/>\n<!-- end -->',
    );
  });

  it('keeps &amp;, &lt; and &gt; escaped and decodes the other references', () => {
    expect(prettyXml('<a t="&amp;&#x41;&quot;">Hi &amp; bye &lt;3 &gt; &#233; &apos;&amp;lt;</a>')).toBe(
      '<a t="&amp;A&quot;">Hi &amp; bye &lt;3 &gt; é \'&amp;lt;</a>',
    );
  });

  it.each([
    ['not markup', '<not xml'],
    ['mismatched tags', '<feed><entry></feed>'],
    ['crossed tags', '<a><b></a></b>'],
    ['two roots', '<a/><b/>'],
    ['two roots, the first closed by a tag', '<a></a><b/>'],
    ['text after the root', '<a/>text'],
    ['text before the root', 'text<a/>'],
    ['no root', '<?xml version="1.0"?><!-- c -->'],
    ['an empty body', ''],
    ['an undeclared entity', '<?xml version="1.0"?><a>&nbsp;</a>'],
    ['an entity declared in a DOCTYPE', '<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>'],
    ['a stray ampersand', '<a>a & b</a>'],
    ['a reference to a non-character', '<a>&#0;</a>'],
    ['an undeclared prefix', '<p:a>undeclared prefix</p:a>'],
    ['an undeclared attribute prefix', '<a p:x="1"/>'],
    ['a repeated attribute', '<a x="1" x="2"/>'],
    ['< in an attribute value', '<a x="<"/>'],
    ['a control character', '<a>\u0001</a>'],
    [']]> in text', '<a>]]></a>'],
    ['-- in a comment', '<a><!-- a -- b --></a>'],
    ['a name the parser would rename', '<a><toString/></a>'],
    ['a name the parser refuses', '<a constructor="x"/>'],
  ])('returns undefined for %s', (_, body) => {
    expect(prettyXml(body)).toBeUndefined();
  });

  it('checks what may surround the root in linear time', () => {
    const started = performance.now();
    expect(prettyXml(`<a/>${' '.repeat(50_000)}x`)).toBeUndefined();
    expect(prettyXml(`<?xml version="1.0"?>${' '.repeat(50_000)}<a/>`)).toBe('<?xml version="1.0"?>\n<a/>');
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
