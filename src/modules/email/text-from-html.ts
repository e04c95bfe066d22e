/**
 * The plain-text part that goes with an HTML template a workspace wrote, when it wrote no text part
 * of its own: the same wording, links written out (`label: url`), tags dropped. Mustache tags are
 * left as they are, so the text is rendered with the same variables as the HTML.
 *
 * One pass over the HTML, each character looked at a bounded number of times (no backtracking
 * pattern over the whole template: a template is up to 100,000 characters an admin chooses).
 */

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Named and numeric character references, except braces (they would make Mustache tags). */
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{1,8});/gi, (whole, name: string) => {
    if (name.startsWith('#')) {
      const hex = name[1] === 'x' || name[1] === 'X';
      const code = hex ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
      const char = code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '';
      return char === '' || char === '{' || char === '}' ? whole : char;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

const BLOCKS = new Set([
  'p',
  'div',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'tr',
  'table',
  'ul',
  'ol',
  'blockquote',
  'section',
  'header',
  'footer',
  'pre',
]);
const SKIPPED = new Set(['script', 'style', 'head', 'title']);

function hrefOf(tag: string): string | null {
  const match = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(tag);
  return match ? (match[1] ?? match[2] ?? match[3] ?? null) : null;
}

export function textFromHtml(html: string): string {
  let out = '';
  /** The open link: its href and where its label starts in `out`. */
  let link: { href: string; start: number } | null = null;
  let i = 0;
  while (i < html.length) {
    const open = html.indexOf('<', i);
    if (open === -1) {
      out += html.slice(i);
      break;
    }
    out += html.slice(i, open);
    const close = html.indexOf('>', open + 1);
    if (close === -1) {
      out += html.slice(open);
      break;
    }
    const tag = html.slice(open + 1, close);
    i = close + 1;
    const name = /^(\/?)([a-z][a-z0-9]*)/i.exec(tag);
    if (!name) continue;
    const ending = name[1] === '/';
    const element = (name[2] as string).toLowerCase();
    if (!ending && SKIPPED.has(element)) {
      const end = new RegExp(`</${element}\\s*>`, 'gi');
      end.lastIndex = i;
      const found = end.exec(html);
      i = found ? end.lastIndex : html.length;
    } else if (element === 'a' && !ending) {
      const href = hrefOf(tag);
      link = href === null ? null : { href, start: out.length };
    } else if (element === 'a' && link) {
      const label = out.slice(link.start).trim();
      out = out.slice(0, link.start) + (label === '' || label === link.href ? link.href : `${label}: ${link.href}`);
      link = null;
    } else if (element === 'br' || (element === 'li' && ending)) {
      out += '\n';
    } else if (element === 'li' && !ending) {
      out += '- ';
    } else if (ending && BLOCKS.has(element)) {
      out += '\n\n';
    }
  }
  const lines = decodeEntities(out)
    .split('\n')
    .map((line) => line.replace(/[ \t\r\f\v]+/g, ' ').trim());
  const joined = lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return joined === '' ? joined : `${joined}\n`;
}
