import type { ComponentChildren } from 'preact';
import { ApiError } from '../api.js';

export const Loading = () => <p aria-busy="true">Loading…</p>;

/** A failed call, said plainly; a 404 means this server has no such endpoint (yet). */
export function Failure({ error }: { error: Error }) {
  const problem = error instanceof ApiError ? error.problem : undefined;
  return (
    <p role="alert" class="error">
      {problem?.status === 404
        ? `This server does not offer this page yet (${problem.detail || 'its endpoint answered 404'}).`
        : `${problem?.title ?? 'Error'}: ${error.message}`}
      {problem?.hint && <small> {problem.hint}</small>}
    </p>
  );
}

/** A report the server cannot give here (no realtime, not run as a service), with its reason. */
export function Unavailable({ message }: { message?: string }) {
  return (
    <p class="placeholder" role="status">
      <Prose text={message ?? 'Not available on this server.'} />
    </p>
  );
}

/** Text from the server, with `backtick` spans shown as code. */
export function Prose({ text }: { text: string }) {
  return (
    <>{text.split(/`([^`]+)`/).map((part, index) => (index % 2 ? <code key={index}>{part}</code> : part))}</>
  );
}

/** A wide table scrolls sideways on a narrow screen instead of pushing the page. */
export const Scroll = ({ children }: { children: ComponentChildren }) => <div class="scroll">{children}</div>;
