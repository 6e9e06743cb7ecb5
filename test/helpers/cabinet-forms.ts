import { request } from 'undici';

/** A cabinet page as a browser without script gets it: status, headers, HTML. */
export type FormResponse = { status: number; headers: Record<string, string | string[] | undefined>; text: string };

/** GET and form POST against a cabinet at `base`, with the cookie header given. */
export function cabinetForms(base: () => string) {
  return {
    async get(path: string, cookie = ''): Promise<FormResponse> {
      const res = await request(base() + path, { headers: cookie ? { cookie } : {} });
      return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
    },
    async post(path: string, form: Record<string, string>, cookie = ''): Promise<FormResponse> {
      const res = await request(base() + path, {
        method: 'POST', body: new URLSearchParams(form).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
      });
      return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
    },
  };
}

export const cookiesOf = (res: FormResponse) => ([] as string[]).concat(res.headers['set-cookie'] ?? []);
/** `name=value` of the cookie the answer sets, for the next request's cookie header. */
export const cookieNamed = (res: FormResponse, name: string) => cookiesOf(res).find((c) => c.startsWith(`${name}=`))?.split(';')[0];
export const csrfOf = (text: string) => /name="_csrf" value="([^"]+)"/.exec(text)![1]!;
