import { Pool } from 'undici';

/** A signed-in admin talking to the service over HTTP (undici, keep-alive). */
export class AdminClient {
  #pool: Pool;
  #cookie = '';

  constructor(baseUrl: string) {
    this.#pool = new Pool(baseUrl, { connections: 16 });
  }

  async signIn(password: string): Promise<void> {
    const response = await this.#pool.request({
      method: 'POST',
      path: '/api/auth/login',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ usernameOrEmail: 'admin', password }),
    });
    await response.body.dump();
    if (response.statusCode !== 200) throw new Error(`sign-in failed: ${response.statusCode}`);
    const setCookie = String(response.headers['set-cookie']);
    this.#cookie = /aw\.sid=[^;]+/.exec(setCookie)![0];
  }

  async call<T = unknown>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
    const response = await this.#pool.request({
      method,
      path,
      headers: { cookie: this.#cookie, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.body.text();
    if (response.statusCode >= 300) throw new Error(`${method} ${path} answered ${response.statusCode}: ${text.slice(0, 300)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  settings(configuration: Record<string, unknown>): Promise<unknown> {
    return this.call('POST', '/api/config', { path: 'webhooks', configuration });
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }
}
