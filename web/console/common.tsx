import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { describeError, type Api } from './api.js';
import type { ConsoleModel } from './model.js';

/** What every page gets. */
export interface PageProps {
  api: Api;
  model: ConsoleModel;
  navigate: (path: string) => void;
}

/** A failure of the API, announced to screen readers as it appears. */
export function ErrorMessage({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  return (
    <p class="error" role="alert">
      {describeError(error)}
    </p>
  );
}

/** A message after an action succeeded. */
export function Status({ text }: { text: string | undefined }) {
  return (
    <p class="status" role="status" aria-live="polite">
      {text ?? ''}
    </p>
  );
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  reload: () => Promise<void>;
}

/** Loads once, and again on `reload`; `every` milliseconds keeps it live. */
export function useLoad<T>(load: () => Promise<T>, every?: number): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const reload = useCallback(async () => {
    try {
      setData(await load());
      setError(undefined);
    } catch (failure) {
      setError(failure);
    }
    // The loader is the page's own, fixed for its life.
  }, []);
  useEffect(() => {
    void reload();
    if (every === undefined) return undefined;
    const timer = setInterval(() => void reload(), every);
    return () => clearInterval(timer);
  }, [reload, every]);
  return { data, error, reload };
}

/** A page the signed-in user has no right to: the API would refuse every call on it. */
export function Refused({ title }: { title: string }) {
  return (
    <Page title={title}>
      <p class="error" role="alert">
        You are not allowed to use this page: it is for administrators.
      </p>
    </Page>
  );
}

export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} - EAS console`;
    document.getElementById('page-title')?.focus();
  }, [title]);
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        {title}
      </h1>
      {children}
    </section>
  );
}

/** A date of the API (ISO 8601) as the browser's locale writes it; blank for none. */
export function formatDate(value: unknown): string {
  if (typeof value !== 'string' || value === '') return '';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toLocaleString();
}

/** Runs an action of a page: its failure is shown, its success message too. */
export function useAction(): {
  busy: boolean;
  error: unknown;
  message: string | undefined;
  run: (action: () => Promise<string | undefined>) => Promise<void>;
  /** Forgets the last action's message and error: another flow now speaks for the page. */
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [message, setMessage] = useState<string | undefined>(undefined);
  const run = useCallback(async (action: () => Promise<string | undefined>) => {
    setBusy(true);
    setError(undefined);
    setMessage(undefined);
    try {
      setMessage(await action());
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }, []);
  const clear = useCallback(() => {
    setError(undefined);
    setMessage(undefined);
  }, []);
  return { busy, error, message, run, clear };
}
