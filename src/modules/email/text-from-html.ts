/**
 * The plain-text part that goes with an HTML template a workspace wrote, when it wrote no text part
 * of its own: the same wording, links written out (`label: url`), tags dropped. Mustache tags are
 * left as they are, so the text is rendered with the same variables as the HTML.
 */

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Named and numeric character references, except braces (they would make Mustache tags). */
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith('#')) {
      const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
      const char = code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '';
      return char === '' || char === '{' || char === '}' ? whole : char;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

const BLOCK_END = /<\/(p|div|h[1-6]|li|tr|table|ul|ol|blockquote|section|header|footer|pre)\s*>/gi;

export function textFromHtml(html: string): string {
  const text = html
    .replace(/<(script|style|head|title)\b[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<a\b[^>]*?\bhref\s*=\s*(["'])(.*?)\1[^>]*>([\s\S]*?)<\/a\s*>/gi, (_whole, _quote: string, href: string, inner: string) => {
      const label = inner.replace(/<[^>]*>/g, '').trim();
      return label === '' || label === href ? href : `${label}: ${href}`;
    })
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<li\b[^>]*>/gi, '- ')
    .replace(BLOCK_END, '\n\n')
    .replace(/<[^>]*>/g, '');
  const lines = decodeEntities(text)
    .split('\n')
    .map((line) => line.replace(/[ \t\r\f\v]+/g, ' ').trim());
  const joined = lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return joined === '' ? joined : `${joined}\n`;
}
