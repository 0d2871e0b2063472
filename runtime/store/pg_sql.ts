/**
 * Fragments of SQL that several migrations of `PG_MIGRATIONS` (`pg_migrations.ts`) share, written
 * once. A migration's text interpolates them, and must stay byte for byte what databases have
 * applied: `pg_migrations_test.ts` pins every migration's SHA-256, so a fragment can never
 * change (a new behaviour is a new fragment and a new migration).
 *
 * @module
 */

/**
 * The first statement of a PL/pgSQL function that acts for the transaction's tenant, held in
 * its variable `t`: no tenant, no action (a refusal, never a statement over no rows).
 */
export const TENANT_UNSET_GUARD = `    IF t IS NULL OR t = '' THEN
      RAISE EXCEPTION 'TENANT_UNSET: no tenant for this transaction'
        USING ERRCODE = 'insufficient_privilege';
    END IF;`;

/**
 * The opening of `tenant_rls(tbl, col)`'s body: row-level security enabled and forced on the
 * table, and a policy that lets its owner (the migrating role) see every tenant. The policy
 * for the runtime's group follows it, keyed as its migration says.
 */
export const RLS_FORCED_OWNER_SEES_ALL =
  `    EXECUTE format('ALTER TABLE public.%I ENABLE ROW LEVEL SECURITY', tbl);
    EXECUTE format('ALTER TABLE public.%I FORCE ROW LEVEL SECURITY', tbl);
    EXECUTE format('CREATE POLICY %I ON public.%I TO %I USING (true) WITH CHECK (true)',
      tbl || '_owner', tbl, current_user);`;

/** What `rowGuard` writes: a trigger function and the triggers that run it. */
export interface RowGuardOptions {
  /** The function's name, and its `BEFORE UPDATE` trigger's. */
  fn: string;
  /** The table it guards. */
  table: string;
  /** The name of a `BEFORE INSERT` trigger running the same function, when new rows are checked too. */
  insertTrigger?: string;
  /** The PL/pgSQL between `BEGIN` and the final `RETURN NEW;` (each line indented four spaces, after a newline). */
  body: string;
}

/**
 * A trigger function that keeps a table's rows to what they may become (it raises, or lets
 * `NEW` through), with a pinned `search_path` so nothing a caller creates stands in for what
 * it calls, and the row triggers that run it before every update (and insert, if named).
 */
export function rowGuard(o: RowGuardOptions): string {
  const insert = o.insertTrigger === undefined ? "" : `
  CREATE TRIGGER ${o.insertTrigger} BEFORE INSERT ON ${o.table}
    FOR EACH ROW EXECUTE FUNCTION ${o.fn}();`;
  return `  CREATE FUNCTION ${o.fn}() RETURNS trigger LANGUAGE plpgsql
    SET search_path = pg_catalog, public, pg_temp AS $f$
  BEGIN${o.body}
    RETURN NEW;
  END $f$;
  CREATE TRIGGER ${o.fn} BEFORE UPDATE ON ${o.table}
    FOR EACH ROW EXECUTE FUNCTION ${o.fn}();${insert}`;
}
