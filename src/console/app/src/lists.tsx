// The pages that list records a page at a time by keyset cursor (runs, audit, stored responses): the filter
// form, the pages read so far, and the table that shows them with its "More" button.
import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { ErrorBox, Loading, TableHead } from './ui';

/** A page of a keyset-paginated list operation: pass `nextCursor` back as `after` for the next page. */
export interface KeysetPage<T> {
  items: T[];
  nextCursor: string | null;
}

export interface FilterForm<F> {
  /** What the form shows (typed, not applied yet). */
  draft: F;
  set: <K extends keyof F>(name: K, value: F[K]) => void;
  /** What the list shows: a new object on every apply, so applying the same filters reads afresh. */
  filters: F;
  apply: (event: FormEvent) => void;
}

export function useFilterForm<F extends object>(initial: F): FilterForm<F> {
  const [draft, setDraft] = useState<F>(initial);
  const [filters, setFilters] = useState<F>(initial);
  return {
    draft,
    set: (name, value) => setDraft((current) => ({ ...current, [name]: value })),
    filters,
    apply: (event) => {
      event.preventDefault();
      setFilters({ ...draft });
    },
  };
}

export interface KeysetList<T> {
  items: T[];
  cursor: string | null;
  error: unknown;
  loading: boolean;
  /** Reads the next page (with the same filters) and appends it. */
  more: () => void;
}

/** The first page whenever `filters` changes (a new object), then more pages on demand. */
export function useKeysetList<F, T>(fetchPage: (filters: F, after?: string) => Promise<KeysetPage<T>>, filters: F): KeysetList<T> {
  const [items, setItems] = useState<T[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);

  const load = async (after?: string) => {
    setLoading(true);
    setError(null);
    try {
      const page = await fetchPage(filters, after);
      setItems((existing) => (after ? [...existing, ...page.items] : page.items));
      setCursor(page.nextCursor);
    } catch (err) {
      setError(err);
      // A failed first page shows no rows: the ones still listed answered other filters.
      if (!after) setItems([]);
    } finally {
      setLoading(false);
    }
  };

  useEffect(() => {
    void load();
  }, [filters]);

  return {
    items,
    cursor,
    error,
    loading,
    more: () => {
      if (cursor) void load(cursor);
    },
  };
}

export function FilterBar({ label, onApply, children }: { label: string; onApply: (event: FormEvent) => void; children: ReactNode }) {
  return (
    <form onSubmit={onApply} className="filters" aria-label={label}>
      {children}
      <button type="submit">Apply filters</button>
    </form>
  );
}

/** The list's table (a row saying `empty` when nothing matches), then "More" while there are more pages. */
export function KeysetTable<T>({
  label,
  columns,
  empty,
  list,
  row,
}: {
  label: string;
  columns: string[];
  empty: string;
  list: KeysetList<T>;
  row: (item: T) => ReactNode;
}) {
  return (
    <>
      <ErrorBox error={list.error} />
      <table aria-label={label}>
        <TableHead columns={columns} />
        <tbody>
          {!list.loading && list.items.length === 0 && (
            <tr>
              <td colSpan={columns.length} className="muted">
                {empty}
              </td>
            </tr>
          )}
          {list.items.map(row)}
        </tbody>
      </table>
      <Loading loading={list.loading} />
      {list.cursor && !list.loading && (
        <button type="button" onClick={list.more}>
          More
        </button>
      )}
    </>
  );
}
