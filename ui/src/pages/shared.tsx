import { ApiError } from '../api.js';

export const Loading = () => <p aria-busy="true">Loading…</p>;

export function Failure({ error }: { error: Error }) {
  const problem = error instanceof ApiError ? error.problem : undefined;
  return (
    <p role="alert" class="error">
      {problem?.status === 404
        ? 'This server does not offer this page.'
        : `${problem?.title ?? 'Error'}: ${error.message}`}
      {problem?.hint && <small> {problem.hint}</small>}
    </p>
  );
}
