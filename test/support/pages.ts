/** A hosted page as a test sees it over HTTP. */
export interface PageResponse {
  status: number;
  headers: Headers;
  html: string;
}

/** The same page on this test server: a link's URL names the public host, the path is what matters. */
export function onServer(baseUrl: string, linkUrl: string): string {
  return baseUrl + new URL(linkUrl).pathname;
}

/** GETs a hosted page (with the browser's headers, e.g. its Accept-Language). */
export async function getPage(url: string, headers: Record<string, string> = {}): Promise<PageResponse> {
  const res = await fetch(url, { redirect: 'manual', headers });
  return { status: res.status, headers: res.headers, html: await res.text() };
}

/** The CSRF token of the form a page rendered. */
export function formTokenOf(html: string): string {
  const token = /name="_form" value="([^"]+)"/.exec(html)?.[1];
  if (!token) throw new Error('The page has no form token');
  return token;
}

/** POSTs a hosted form URL-encoded, as a browser does; redirects are returned, not followed. */
export async function postForm(
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<PageResponse> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
  return { status: res.status, headers: res.headers, html: await res.text() };
}

/** Loads the page, then submits its form with these fields. */
export async function submitPage(url: string, fields: Record<string, string>): Promise<PageResponse> {
  const page = await getPage(url);
  return postForm(url, { _form: formTokenOf(page.html), ...fields });
}
