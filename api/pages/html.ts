/** HTML that is already safe: the output of `html`, or markup built only from such pieces. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const entities: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Escapes text for HTML content and quoted attribute values. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => entities[c]!);
}

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return escapeHtml(String(value));
  throw new TypeError(`html: cannot render a ${typeof value} value`);
}

/**
 * Tagged template that escapes every interpolated value unless it is `SafeHtml` (nested `html`); arrays are
 * joined, and null, undefined and false render nothing. Attribute values must be written in double quotes.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, i) => (out += render(value) + strings[i + 1]!));
  return new SafeHtml(out);
}
