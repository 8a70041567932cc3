import { sha256 } from '../../runtime/crypto.js';

/**
 * The hosted pages' stylesheet, served from /hosted/styles.css so the CSP needs no inline styles; the
 * account's colours come in a nonce'd <style> of three custom properties. Text colours meet WCAG AA in
 * every state: hover underlines rather than shading, since a filter would change colours whose contrast
 * was computed. Two-column rows fall to one column when a column would be under 10rem (320 px reflow).
 */
export const stylesheet = `
*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; min-height: 100vh; background: #f3f4f6; color: #1f2328;
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  overflow-wrap: break-word;
}
.page { max-width: 32rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
.page.wide { max-width: 44rem; }
.masthead { display: flex; align-items: center; gap: .75rem; min-height: 3rem; margin-bottom: 1rem; }
.masthead img { max-height: 2.5rem; max-width: 12rem; }
.brand-name { font-size: 1.25rem; font-weight: 700; color: #1f2328; min-width: 0; }
.panel {
  background: #fff; border: 1px solid #d0d7de; border-radius: .75rem; padding: 1.5rem;
  box-shadow: 0 1px 3px rgba(31, 35, 40, .08);
}
.panel > :last-child { margin-bottom: 0; }
h1 { font-size: 1.5rem; line-height: 1.25; margin: 0 0 .5rem; }
h2 { font-size: 1.125rem; margin: 0 0 .25rem; }
p { margin: 0 0 1rem; }
.lead { color: #424a53; }
.field { margin-bottom: 1.125rem; }
.row { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 10rem), 1fr)); gap: 0 1rem; }
label { display: block; font-weight: 600; margin-bottom: .375rem; }
.hint { display: block; font-weight: 400; color: #57606a; font-size: .875rem; }
input {
  display: block; width: 100%; min-height: 2.75rem; padding: .5rem .75rem; font: inherit; color: inherit;
  background: #fff; border: 1px solid #6e7781; border-radius: .5rem;
}
input[aria-invalid="true"] { border: 2px solid #b42318; }
.field-error { display: block; color: #b42318; font-size: .875rem; margin-top: .375rem; font-weight: 600; }
.alert {
  border: 1px solid #b42318; border-left-width: .375rem; background: #fef3f2; color: #7a1a12;
  border-radius: .5rem; padding: .75rem 1rem; margin-bottom: 1.25rem;
}
.alert > :last-child { margin-bottom: 0; }
.alert h2 { font-size: 1rem; margin: 0 0 .25rem; }
.alert ul { margin: 0; padding-left: 1.25rem; }
.alert a { color: #7a1a12; }
.button {
  display: inline-flex; align-items: center; justify-content: center; width: 100%; min-height: 2.875rem;
  padding: .625rem 1rem; font: inherit; font-weight: 600; text-decoration: none; cursor: pointer;
  border-radius: .5rem; border: 2px solid var(--accent); background: var(--brand); color: var(--on-brand);
}
.button:hover { text-decoration: underline; text-underline-offset: .2em; }
.button.secondary { background: #fff; color: var(--accent); border-color: var(--accent); }
.button.plain { background: #fff; color: #1f2328; border: 1px solid #6e7781; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
input:focus-visible { outline: 3px solid var(--accent); outline-offset: 1px; border-color: var(--accent); }
.offers { list-style: none; margin: 0 0 1.5rem; padding: 0; display: grid; gap: 1rem; }
.offer { border: 1px solid #d0d7de; border-radius: .75rem; padding: 1rem; display: grid; gap: .75rem; }
.offer p { margin: 0; color: #424a53; }
.price { font-weight: 700; color: #1f2328; }
.choices { display: grid; gap: .75rem; border-top: 1px solid #d0d7de; padding-top: 1.25rem; }
.secure { display: flex; gap: .5rem; align-items: center; color: #57606a; font-size: .875rem; margin-top: 1rem; }
.footer { text-align: center; color: #57606a; font-size: .8125rem; margin-top: 1.5rem; }
.visually-hidden {
  position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap;
}
@media (min-width: 40rem) {
  .page { padding-top: 3rem; }
  .panel { padding: 2rem; }
  .offer { grid-template-columns: 1fr auto; align-items: center; }
  .offer .button { width: auto; min-width: 10rem; }
}
@media (prefers-reduced-motion: reduce) { * { transition: none !important; } }
`;

/** Changes whenever the stylesheet does, so it can be cached for a long time. */
export const stylesheetVersion = sha256(stylesheet).slice(0, 12);
export const stylesheetPath = '/hosted/styles.css';
