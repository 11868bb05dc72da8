/** The admin token lives in this tab's session only: never in a URL, gone when the tab closes. */
const tokenKey = 'berth.adminToken';

export const getToken = (): string | null => sessionStorage.getItem(tokenKey);
export const setToken = (token: string): void => sessionStorage.setItem(tokenKey, token);
export const clearToken = (): void => sessionStorage.removeItem(tokenKey);

export interface Problem {
  title: string;
  status: number;
  detail: string;
  code?: string;
  hint?: string;
  errors?: Array<{ path: string; message: string }>;
}

/** An error answer of the API, with its problem document. */
export class ApiError extends Error {
  readonly problem: Problem;
  constructor(problem: Problem) {
    super(problem.detail || problem.title);
    this.problem = problem;
  }
}

/** Calls the API with the admin token; a problem answer becomes an ApiError. */
export async function api<T>(path: string, init: RequestInit & { json?: unknown } = {}): Promise<T> {
  const headers = new Headers(init.headers);
  const token = getToken();
  if (token) headers.set('authorization', `Bearer ${token}`);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(init.json);
  }
  const response = await fetch(path, { ...init, headers, body: body ?? null });
  if (response.status === 204) return undefined as T;
  const value = parseJson(await response.text());
  if (!response.ok) {
    const problem: Problem =
      value && typeof value === 'object' && 'status' in value
        ? (value as Problem)
        : {
            title: response.statusText || 'Error',
            status: response.status,
            detail: `${path} answered ${response.status}`,
          };
    if (response.status === 401 || response.status === 403)
      window.dispatchEvent(new CustomEvent('berth:unauthorized'));
    throw new ApiError(problem);
  }
  return value as T;
}

/** A body that is not JSON (a proxy's HTML error page, say) reads as undefined rather than throwing. */
function parseJson(text: string): unknown {
  try {
    return text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    return undefined;
  }
}
